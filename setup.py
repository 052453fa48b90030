"""The two build steps pyproject.toml cannot declare (all the rest is there).

1. The wheel's ``autograd_kata/kit/``: the learner's kata that ``kata init``
   writes out (stubs, tests, hints, the learner's README; no reference code),
   made here from the repository or the sdist by ``autograd_kata.learner.init``
   and scanned with ``kata release``'s leak scan: a leak fails the build.
2. The long description shown on the package index: README.md with every
   relative link and picture made absolute (into the repository named by
   ``[project.urls] Source``), so that none is broken there while the README
   keeps working in a clone and in a student copy.  They point into ``main``,
   or into the git ref ``KATA_LINK_REF`` names: the release workflow sets it to
   the version's tag, so the page of a release shows that release's files.
"""
import os
import re
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BRANCH = "main"
REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*")  # a branch or tag name that is safe in a URL


def link_ref(env=os.environ) -> str:
    """The git ref the package page's links point into: ``KATA_LINK_REF`` or ``main``."""
    ref = env.get("KATA_LINK_REF", "").strip() or BRANCH
    if not REF.fullmatch(ref) or ".." in ref:
        raise SystemExit(f"KATA_LINK_REF={ref!r} is not a branch or tag name (letters, digits, . _ / -)")
    return ref


def _pyproject() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: tomli, a build requirement there
        import tomli as tomllib
    return tomllib.loads((HERE / "pyproject.toml").read_text(encoding="utf-8"))


def absolute_links(text: str, source: str, branch: str = BRANCH) -> str:
    """``text`` (Markdown) with every relative link target made absolute: pictures
    (``![...](...)``) to the raw file, other links to the repository's page of it."""
    raw = source.replace("https://github.com/", "https://raw.githubusercontent.com/") + f"/{branch}/"
    page = f"{source}/blob/{branch}/"

    def one(match):
        bang, label, target = match.group(1), match.group(2), match.group(3)
        if re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", target):
            return match.group(0)
        return f"{bang}[{label}]({(raw if bang else page) + target})"
    return re.sub(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)", one, text)


class BuildPyWithKit(build_py):
    """build_py, then the learner's kit into the wheel (not for an editable
    install: there ``kata init`` writes the kit from the clone itself)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        sys.path.insert(0, str(HERE))
        try:
            from autograd_kata.learner.init import KIT, write_kit
        finally:
            sys.path.remove(str(HERE))
        # a build/ folder left from an older build may hold what the wheel must not
        stale = Path(self.build_lib) / "autograd_kata" / "maintainer"
        if stale.exists():
            import shutil
            shutil.rmtree(stale)
            print(f"removed {stale}: the maintainers' checks stay out of the wheel")
        dest = Path(self.build_lib) / "autograd_kata" / KIT
        if dest.exists():
            import shutil
            shutil.rmtree(dest)
        written = write_kit(HERE, dest)
        print(f"autograd_kata/{KIT}: {len(written)} files for kata init, scanned: no reference code")


setup(
    cmdclass={"build_py": BuildPyWithKit},
    long_description=absolute_links((HERE / "README.md").read_text(encoding="utf-8"),
                                    _pyproject()["project"]["urls"]["Source"], link_ref()),
    long_description_content_type="text/markdown",
)
