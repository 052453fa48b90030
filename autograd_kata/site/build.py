"""``kata site DIR``: the kata as a static site that runs its own tests in the browser.

What DIR gets (any static host serves it: GitHub Pages, ``python -m http.server``)::

    index.html  kata.js  plain.js  worker.js  style.css   the page (static/ of this package)
    sw.js         the service worker that keeps every file below for a reload offline; its cache is
                  named by a hash of them all (``offline_worker``), so a new build replaces it
    editor.mjs    the editor: CodeMirror 6 with Python mode (codemirror.py; pinned, sha256-checked),
                  when there is a bundle; else the page's editor is a plain text box (plain.js)
    kata.zip      the learner's kata: stubs, tests, conftests, hints, the tool; never the reference
    wheels/       pytest and the plugins the tests use, pure-Python wheels (pinned, sha256-checked)
    pyodide/      CPython for WebAssembly (the npm package pyodide, pinned, sha256-checked)
    explore.en.html  explore.ja.html   the slope explorer
    site.json     the versions the page states, and the wheel list the worker unpacks

Nothing is fetched at run time from anywhere but DIR.  The learner's files come
from the student copy's own writer (``core.student_copy.write_student_tree``)
in the maintainers' repository, and are scanned for reference code by
``kata release``'s leak scan before anything is written; in a student copy
(no reference to leak) its own files are taken as they are.

Where Pyodide, the wheels and the editor come from: ``--pyodide`` (the npm tarball
``pyodide-VERSION.tgz``, as ``npm pack pyodide@VERSION`` writes it, or its
unpacked ``package/`` folder), ``--wheels`` (a folder, as ``pip download
--no-deps`` fills it) and ``--codemirror`` (the bundle, as ``codemirror.py``
builds it with ``npm ci`` and esbuild); all default to ``.kata/site-deps/``,
which ``--fetch`` fills by those commands (``KATA_SITE_DEPS=FOLDER`` names
another folder).  Every file is checked against the sha256 pinned here; a file
that does not match is refused, naming it.  Only the editor may be missing
(and not named): the page then has a plain text box, and the command and the
page's versions line say so.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from importlib import resources
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import languages, raw, t
from autograd_kata.core.manifest import PROTECTED_ROLES, STAGES, find_root, student_role
from autograd_kata.site import codemirror, plain

PYODIDE_VERSION = "314.0.8"
PYODIDE_TARBALL = f"pyodide-{PYODIDE_VERSION}.tgz"
# The runtime files the page loads (the tarball holds more: consoles, maps, types).
PYODIDE_FILES = {
    "pyodide.mjs": "1bb8cc14f9405aaa7cd4e00c12edd0a8539de9cc026618d6ee5a9663f367dc70",
    "pyodide.asm.mjs": "22514b8be6980e28a02c8b1d6387ce8dfe666fc4edf8d547cff5dce29ff4d972",
    "pyodide.asm.wasm": "e14d49ceca9b4a0e274ea918f3a898de2d3880b6e5573a6cfe1a2267ecc70329",
    "python_stdlib.zip": "2bd3394a145bfbbe5bbc9d9d6ab9136abbb986c6fef6c142b3a2962227aa5c28",
    "pyodide-lock.json": "5dc2fc119108bc148c7457dc86e7675b5c87e1cafd420b9c34c1eaef7b36c010",
}
# What the stage tests import, as pure-Python wheels for Python 3.14 (Pyodide's):
# pytest 9 and what it needs, pytest-check; Hypothesis (6.155.7 is the last
# release with a pure wheel) for the property tests, which grading runs.
WHEELS = {
    "pytest-9.2.0-py3-none-any.whl": "07acdcf88ec174f907dc01af70bf52d49b014bbab03faeeade31c96b18c2e588",
    "pluggy-1.7.0-py3-none-any.whl": "7dd7b0d8832ba3cb632c306926ded123429211b83641b35dc5c41ad2d34f9bec",
    "iniconfig-2.3.1-py3-none-any.whl": "9121e2c1fdb355232495be3194c8dfe87ccc2d5dee45947b78e68f499790d7a7",
    "packaging-26.4-py3-none-any.whl": "81383611a09c1bc0b08b76e0fd5829d7c6824c65b27a6aee339da133f4233ea2",
    "pygments-2.21.0-py3-none-any.whl": "2363c69b61c4a97c838da3b130dcd6468f4848992b21a82f2a63ec34377137d9",
    "pytest_check-3.0.3-py3-none-any.whl": "e4fcfc11fd54a319232553ad9e8e86acd186d5a7f690edb1636309cb39194546",
    "hypothesis-6.155.7-py3-none-any.whl": "9f634bdb1f9e9b8ab6ba09431cf2deedb750c96978125a6fb3c5a0f6c6db4131",
    "sortedcontainers-2.4.0-py2.py3-none-any.whl": "a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0",
}
DEPS_DIR = ".kata/site-deps"
DEPS_ENV = "KATA_SITE_DEPS"  # another folder for them (CI keeps one under its clone)
STATIC = ("index.html", "kata.js", "plain.js", "worker.js", "style.css")
SERVICE_WORKER = "sw.js"  # static/ too, written last: it names every other file and their hash
# The page's own words (catalogue ids); the check, hint and diff texts are the commands' own.
PAGE_IDS = ("site.title", "site.lead", "site.stage", "site.check", "site.hint", "site.diff_previous",
            "site.reset", "site.download", "site.explore", "site.language", "site.loading", "site.ready",
            "site.running", "site.saved", "site.reset_done", "site.restore", "site.no_worker",
            "site.restarted", "site.versions", "site.local", "site.not_here",
            "site.no_backup", "site.plain_editor", "site.locked", "site.checking", "site.restarting",
            "site.other_tab", "site.recursion", "site.no_result", "site.escape_tab", "site.editor_keys", "site.output",
            "site.downloaded", "site.hang_in_c",
            "hang.prefix", "hang.whole_run")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _checked(name: str, data: bytes, want: str, where: str) -> bytes:
    if sha256(data) != want:
        raise Refusal(t("site.bad_hash", file=name, where=where, got=sha256(data), want=want), code=2, where="site")
    return data


def pyodide_files(source: Path) -> dict[str, bytes]:
    """The runtime files from the npm tarball or an unpacked folder, each checked."""
    found: dict[str, bytes] = {}
    if source.is_file():
        data = source.read_bytes()  # each file is checked below, whichever tarball holds it
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
            for member in archive.getmembers():
                name = member.name.removeprefix("package/")
                if name in PYODIDE_FILES and member.isfile():
                    handle = archive.extractfile(member)
                    if handle is not None:  # None only for a member that is not a regular file
                        found[name] = handle.read()
    elif source.is_dir():
        folder = source / "package" if (source / "package" / "pyodide.mjs").is_file() else source
        found = {name: (folder / name).read_bytes() for name in PYODIDE_FILES if (folder / name).is_file()}
    else:
        raise Refusal(t("site.no_pyodide", path=source, version=PYODIDE_VERSION, deps=DEPS_DIR), code=2, where="site")
    missing = [name for name in PYODIDE_FILES if name not in found]
    if missing:
        raise Refusal(t("site.pyodide_incomplete", path=source, files=", ".join(missing), version=PYODIDE_VERSION),
                      code=2, where="site")
    return {name: _checked(name, data, PYODIDE_FILES[name], str(source)) for name, data in found.items()}


def wheel_files(folder: Path) -> dict[str, bytes]:
    missing = [name for name in WHEELS if not (folder / name).is_file()]
    if missing:
        raise Refusal(t("site.no_wheels", folder=folder, files=", ".join(missing), deps=DEPS_DIR), code=2, where="site")
    return {name: _checked(name, (folder / name).read_bytes(), want, str(folder)) for name, want in WHEELS.items()}


def editor_file(path: Path, named: bool) -> bytes | None:
    """The editor's bundle, checked; None when there is none and none was named (the plain text box)."""
    if not path.is_file():
        if named:
            raise Refusal(t("site.no_editor", path=path, version=codemirror.CODEMIRROR_VERSION), code=2, where="site")
        return None
    return _checked(path.name, path.read_bytes(), codemirror.BUNDLE_SHA256, str(path))


def pins(name: str) -> str:
    """``pytest-9.2.0-py3-none-any.whl`` -> ``pytest==9.2.0``."""
    project, version = name.split("-")[:2]
    return f"{project}=={version}"


def fetch(deps: Path, out=print) -> None:
    """Fill ``deps`` with what the site needs, by ``npm pack`` and ``pip download``
    (the registries' own clients); files already there are kept."""
    deps.mkdir(parents=True, exist_ok=True)
    npm = shutil.which("npm")
    if not (deps / PYODIDE_TARBALL).is_file():
        if npm is None:
            raise Refusal(t("site.no_npm", what=f"pyodide@{PYODIDE_VERSION}", option="--pyodide"), code=2, where="site")
        out(t("site.fetching", what=f"pyodide@{PYODIDE_VERSION}"))
        subprocess.run([npm, "pack", f"pyodide@{PYODIDE_VERSION}", "--silent"], cwd=deps, check=True,
                       stdout=subprocess.DEVNULL)
    if not (deps / codemirror.BUNDLE).is_file():
        if npm is None:
            raise Refusal(t("site.no_npm", what=codemirror.BUNDLE, option="--codemirror"), code=2, where="site")
        out(t("site.building_editor", what=codemirror.NAME))
        bundle = _checked(codemirror.BUNDLE, codemirror.build_bundle(npm), codemirror.BUNDLE_SHA256, "npm ci + esbuild")
        (deps / codemirror.BUNDLE).write_bytes(bundle)  # only a checked bundle is kept
    wanted = [pins(name) for name in WHEELS if not (deps / name).is_file()]
    if wanted:
        out(t("site.fetching", what=", ".join(wanted)))
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.14", "--implementation", "py", "--platform", "any",
                        "-d", str(deps), *wanted], check=True)


def learner_files(root: Path) -> dict[str, bytes]:
    """The learner's kata, relative path -> content: a student copy's files, never the reference."""
    with tempfile.TemporaryDirectory(prefix="kata-site-") as tmp:
        staging = Path(tmp) / "kata"
        staging.mkdir()
        if (root / "solutions").is_dir():
            from autograd_kata.core.leaks import refuse_leaks
            from autograd_kata.core.student_copy import source_files, write_student_tree
            wanted = [rel for rel in source_files(root) if student_role(rel) in (*PROTECTED_ROLES, "exercise")
                      or rel.startswith("hints/") or rel == "pyproject.toml"]
            write_student_tree(root, staging, files=wanted)
            said: list[str] = []
            if refuse_leaks(staging, root, "the site", out=said.append):
                raise Refusal("\n".join(said), code=1, where="site")
        else:  # a student copy: its own files, and its pristine stubs for Reset
            for path in sorted(root.rglob("*")):
                rel = path.relative_to(root).as_posix()
                keep = rel.startswith(".kata-pristine/") or student_role(rel) in (*PROTECTED_ROLES, "exercise") \
                    or rel.startswith("hints/") or rel == "pyproject.toml"
                if path.is_file() and keep and "__pycache__" not in rel:
                    target = staging / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target)
        return {p.relative_to(staging).as_posix(): p.read_bytes()
                for p in sorted(staging.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def _zip(files: dict[str, bytes]) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        for rel, content in sorted(files.items()):
            info = zipfile.ZipInfo(rel, date_time=(2020, 1, 1, 0, 0, 0))  # the same files, the same zip
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return data.getvalue()


def page_text() -> dict[str, dict[str, str]]:
    """The page's words in every language: ``{lang: {id: text}}``, backticks left out (``plain``)."""
    return {lang: {msgid: plain(raw(msgid, lang)) for msgid in PAGE_IDS} for lang in languages()}


def offline_worker(site: Path) -> tuple[str, bytes]:
    """``sw.js`` for the site in ``site`` (every other file written): the build's name (a
    hash of each file's path and content, so the same files give the same name and any
    change a new one) and the worker, which keeps those files under that name."""
    files = sorted(rel for rel in (p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
                   if rel != SERVICE_WORKER)
    template = (resources.files("autograd_kata.site") / "static" / SERVICE_WORKER).read_text(encoding="utf-8")
    digest = hashlib.sha256(template.encode("utf-8"))  # a new worker is a new cache too
    for rel in files:
        digest.update(f"{rel}\0{sha256((site / rel).read_bytes())}\n".encode())
    build_id = digest.hexdigest()[:16]
    listed = json.dumps(["./", *files], ensure_ascii=False)  # "./": the folder's own address serves index.html
    worker = template.replace('"__KATA_BUILD__"', json.dumps(build_id)).replace('["__KATA_FILES__"]', listed)
    return build_id, worker.encode("utf-8")


def build(dest: Path, root: Path, pyodide: Path, wheels: Path, editor: Path, editor_named: bool = False,
          out=print) -> dict:
    """Write the site to ``dest``; returns what ``site.json`` says."""
    from autograd_kata.pictures import explore
    runtime = pyodide_files(pyodide)
    wheel_data = wheel_files(wheels)
    bundle = editor_file(editor, editor_named)
    kata = _zip(learner_files(root))
    if dest.exists() and (not dest.is_dir() or (any(dest.iterdir()) and not (dest / "site.json").is_file())):
        raise Refusal(t("site.not_empty", folder=dest), code=2, where="site")
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.kata-site-", dir=dest.parent if dest.parent.exists()
                                    else None))
    try:
        for name in STATIC:
            (staging / name).write_bytes((resources.files("autograd_kata.site") / "static" / name).read_bytes())
        (staging / "pyodide").mkdir()
        for name, data in runtime.items():
            (staging / "pyodide" / name).write_bytes(data)
        (staging / "wheels").mkdir()
        for name, data in wheel_data.items():
            (staging / "wheels" / name).write_bytes(data)
        (staging / "kata.zip").write_bytes(kata)
        if bundle is not None:
            (staging / codemirror.SITE_FILE).write_bytes(bundle)
        for lang in languages():
            explore.write(staging / f"explore.{lang}.html", lang=lang)
        info = {
            "kata": __version__,
            "pyodide": PYODIDE_VERSION,
            "python": "3.14",
            "wheels": sorted(WHEELS),
            "packages": [pins(name) for name in WHEELS],
            "editor": {"name": codemirror.NAME, "file": codemirror.SITE_FILE} if bundle is not None else None,
            "kata_zip_sha256": sha256(kata),
            "stages": [{"number": s.number, "file": s.source("exercises")} for s in STAGES],
            "languages": list(languages()),
            "text": page_text(),
        }
        (staging / "site.json").write_text(json.dumps(info, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        (staging / SERVICE_WORKER).write_bytes(offline_worker(staging)[1])
        if dest.exists():
            shutil.rmtree(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging.rename(dest)
        dest.chmod(0o755)  # mkdtemp made it private; a web server must read it
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    out(t("site.wrote", folder=dest, mb=f"{size / 1e6:.1f}", pyodide=PYODIDE_VERSION))
    if bundle is None:  # once, in the command's output; the page's versions line says it too
        out(t("site.no_editor_bundle", path=editor, version=codemirror.CODEMIRROR_VERSION))
    out(t("site.serve", folder=dest))
    return info


def site_command(folder: str, pyodide: str | None = None, wheels: str | None = None,
                 codemirror_bundle: str | None = None, fetch_deps: bool = False) -> int:
    """The handler of ``kata site DIR``."""
    root = find_root()
    deps = Path(os.environ.get(DEPS_ENV) or root / DEPS_DIR)
    if fetch_deps:
        fetch(deps)
    build(Path(folder).resolve(), root, Path(pyodide) if pyodide else deps / PYODIDE_TARBALL,
          Path(wheels) if wheels else deps, Path(codemirror_bundle) if codemirror_bundle else deps / codemirror.BUNDLE,
          editor_named=bool(codemirror_bundle))
    return 0
