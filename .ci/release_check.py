"""Whether a tag may be released (.github/workflows/release.yml runs this before it publishes).

    python .ci/release_check.py TAG [--dist DIR]

Refuses, with every reason, unless:
  - TAG is ``v`` + ``__version__`` (``autograd_kata/__init__.py``, the one place the
    version is written);
  - CHANGELOG.md has that version's heading with its release date,
    ``## X.Y.Z - YYYY-MM-DD`` (a real date);
  - with ``--dist``: DIR holds exactly one wheel and one sdist of that version, and the
    wheel's long description (the package index's page) links into TAG, never ``main``
    (setup.py does it when ``KATA_LINK_REF`` names the tag).
Standard library only, and the package is not imported: it runs before anything is installed.
"""
from __future__ import annotations

import argparse
import datetime
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSION = re.compile(r'^__version__\s*=\s*["\']([^"\']+)["\']', re.MULTILINE)


def version(root: Path = ROOT) -> str:
    """``__version__`` as autograd_kata/__init__.py writes it."""
    found = VERSION.search((root / "autograd_kata" / "__init__.py").read_text(encoding="utf-8"))
    if not found:
        raise SystemExit("release check: autograd_kata/__init__.py sets no __version__")
    return found.group(1)


def changelog_date(text: str, ver: str) -> tuple[str | None, str]:
    """(the date of ``ver``'s heading, or None; what is wrong with it, or "")."""
    heading = re.search(rf"^## {re.escape(ver)}\b(.*)$", text, re.MULTILINE)
    if not heading:
        return None, f"CHANGELOG.md has no heading for {ver} (expected '## {ver} - YYYY-MM-DD')"
    rest = heading.group(1).strip()
    dated = re.fullmatch(r"-\s*(\d{4}-\d{2}-\d{2})", rest)
    if not dated:
        return None, f"CHANGELOG.md's heading for {ver} has no release date: '## {ver}{heading.group(1)}' " \
                     f"(expected '## {ver} - YYYY-MM-DD')"
    try:
        datetime.date.fromisoformat(dated.group(1))
    except ValueError:
        return None, f"CHANGELOG.md's date for {ver}, {dated.group(1)}, is not a date"
    return dated.group(1), ""


def wheel_description(wheel: Path) -> str:
    """The wheel's long description: its METADATA's body, after the headers (whose
    Project-URLs, such as the Changelog's, may rightly point into main)."""
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return archive.read(name).decode("utf-8").partition("\n\n")[2]


def dist_problems(dist: Path, ver: str, tag: str) -> list[str]:
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    problems = []
    if len(wheels) != 1 or len(sdists) != 1:
        return [f"{dist} should hold one wheel and one sdist; it has {len(wheels)} and {len(sdists)}"]
    for path in (wheels[0], sdists[0]):
        if f"-{ver}" not in path.name:
            problems.append(f"{path.name} is not version {ver}")
    text = wheel_description(wheels[0])
    if re.search(r"/blob/main/|githubusercontent\.com/[^/\s)]+/[^/\s)]+/main/", text):
        problems.append(f"the package page links into main, not {tag}: build with KATA_LINK_REF={tag}")
    elif f"/blob/{tag}/" not in text:
        problems.append(f"the package page has no link into {tag}: build with KATA_LINK_REF={tag}")
    return problems


def problems(tag: str, root: Path = ROOT, dist: Path | None = None) -> list[str]:
    """Every reason ``tag`` may not be released from ``root``; [] when it may."""
    ver = version(root)
    found = []
    if tag != f"v{ver}":
        found.append(f"the tag {tag!r} is not the version: autograd_kata/__init__.py says {ver}, "
                     f"so the tag must be v{ver}")
    _, wrong = changelog_date((root / "CHANGELOG.md").read_text(encoding="utf-8"), ver)
    if wrong:
        found.append(wrong)
    if dist is not None:
        found += dist_problems(dist, ver, tag)
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag", help="the git tag being released, e.g. v0.1.0")
    parser.add_argument("--dist", type=Path, help="the folder python -m build wrote")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    found = problems(args.tag, args.root, args.dist)
    for problem in found:
        print(f"release check: {problem}", file=sys.stderr)
    if not found:
        print(f"release check: {args.tag} may be released (version {version(args.root)}, dated in CHANGELOG.md"
              + (", the package page links into the tag)" if args.dist else ")"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
