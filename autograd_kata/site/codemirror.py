"""The page's editor: CodeMirror 6 with Python mode, one ES module built from pinned packages.

``editor/`` (package data) is a small npm project: ``package.json`` pins every
package it imports, ``package-lock.json`` holds each package's integrity hash
(45 of them, esbuild's builds for every platform among them), ``editor.js`` is
the API the page uses (``createEditor``; ``static/plain.js`` is the same API
over a text box, for a site built without the bundle).  ``kata site --fetch``
builds it as Pyodide is fetched, with the registry's own client: ``npm ci
--ignore-scripts`` (npm checks every hash of the lock; no package's install
script runs) then ``npm run build`` (esbuild, from the lock too), in a
temporary folder, into the deps folder as ``BUNDLE``.  esbuild's output is the
same on every machine for the same packages, so the bundle's sha256 is pinned
here too, and a bundle that is not that file is refused by name, as a wheel is.
"""
from __future__ import annotations

import subprocess
import tempfile
from importlib import resources
from pathlib import Path

CODEMIRROR_VERSION = "6.0.2"
LANG_PYTHON_VERSION = "6.2.1"
NAME = f"CodeMirror {CODEMIRROR_VERSION} (@codemirror/lang-python {LANG_PYTHON_VERSION})"
BUNDLE_SHA256 = "4a222aad548ae26880c23814607f7f99f8d9d795c403433516ed09738a77dedf"
# in the deps folder: what --codemirror takes; named by its hash, so that a deps folder
# fetched for an older editor.js builds the new bundle beside the old one, not in its place
BUNDLE = f"codemirror-{CODEMIRROR_VERSION}-kata-{BUNDLE_SHA256[:8]}.mjs"
SITE_FILE = "editor.mjs"  # in the site
PROJECT = ("package.json", "package-lock.json", "editor.js")  # editor/: what the build reads


def project_files() -> dict[str, bytes]:
    folder = resources.files("autograd_kata.site") / "editor"
    return {name: (folder / name).read_bytes() for name in PROJECT}


def build_bundle(npm: str) -> bytes:
    """The bundle, built with ``npm`` (its path); the caller checks its hash.  npm's own
    cache serves a second build: a few seconds, with no download."""
    with tempfile.TemporaryDirectory(prefix="kata-editor-") as tmp:
        work = Path(tmp)
        for name, data in project_files().items():
            (work / name).write_bytes(data)
        quiet = ("--no-audit", "--no-fund", "--loglevel=error")
        subprocess.run([npm, "ci", "--ignore-scripts", "--prefer-offline", *quiet], cwd=work, check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([npm, "run", "build", "--silent"], cwd=work, check=True, stdout=subprocess.DEVNULL)
        return (work / "dist" / "editor.mjs").read_bytes()
