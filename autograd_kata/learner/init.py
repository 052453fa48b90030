"""``kata init [DIR]``: a learner's kata, written from the installed package.

What a learner gets is what ``kata release`` writes (``write_student_tree``:
the stubs, the tests, the hints, the learner's README, the pristine stubs for
``kata reset``), less the tool itself, which is already installed, and with a
``pyproject.toml`` for the learner's venv (``learner-pyproject.toml.tmpl``:
the pytest settings, and ``autograd-kata`` of this version as its one
dependency).  It is written once, when the wheel is built (``setup.py`` calls
``write_kit`` into the wheel's ``autograd_kata/kit/``), and scanned there with
``kata release``'s leak scan: a leak fails the build.  The wheel therefore holds
no ``solutions/``, no solution code and not ``autograd_kata/maintainer/``
(pyproject.toml leaves that subpackage out; the sdist keeps it).

``kata init`` copies that kit; run from a clone (an editable install, where
there is no built kit but the reference is at hand), it writes the kit afresh
from the clone, with the same scan.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t
from autograd_kata.core.manifest import INIT_FOLDER, PROTECTED_ROLES, RELEASE_FILE, student_role

KIT = "kit"                       # the kit's folder inside the installed package
PACKAGE = Path(__file__).resolve().parent.parent  # the installed autograd_kata/


def learner_pyproject(text: str) -> str:
    """The ``pyproject.toml`` of a kata written by ``kata init``, from the
    maintainers' ``text``: their pytest settings and Python requirement, and
    this version of ``autograd-kata`` (with its ``pictures`` extra) as what
    ``python -m pip install -e .`` installs."""
    from autograd_kata.core.student_copy import fill, load_toml, template, toml_table, toml_value

    data = load_toml(text)
    project = data["project"]
    name = project["name"]
    return fill(template("learner-pyproject.toml.tmpl"),
                version=__version__, requires_python=toml_value(project.get("requires-python", ">=3.10")),
                tool=toml_value(f"{name}=={__version__}"), tool_pictures=toml_value(f"{name}[pictures]=={__version__}"),
                pytest=toml_table("tool.pytest.ini_options",
                                   data.get("tool", {}).get("pytest", {}).get("ini_options", {})))


def kit_files(root: Path) -> list[str]:
    """The files of ``root`` (a maintainers' repository) a learner's kata is written
    from: a student copy's, less the tool and the maintainers' pyproject."""
    from autograd_kata.core.student_copy import source_files

    return [name for name in source_files(root) if student_role(name) != "tool" and name != "pyproject.toml"]


def write_kit(root: Path, dest: Path) -> list[str]:
    """Write the learner's kata from the repository ``root`` into ``dest`` (created,
    must not exist or be empty), then scan it: on a leak ``dest`` is removed and
    ``Refusal`` (code 1) names every place.  Returns what was written."""
    from autograd_kata.core.leaks import scan
    from autograd_kata.core.student_copy import write_student_tree

    root, dest = Path(root), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    written = write_student_tree(root, dest, files=kit_files(root))
    (dest / "pyproject.toml").write_text(learner_pyproject((root / "pyproject.toml").read_text(encoding="utf-8")),
                                         encoding="utf-8")
    written.append("pyproject.toml")
    # marks a learner's kata (manifest.is_student_copy: `kata --help` lists the learners'
    # commands) and records the checksums of what grading reads, as kata release's does
    graded = sorted(rel for rel in written if student_role(rel) in PROTECTED_ROLES or rel == "pyproject.toml")
    record = {"kata": __version__, "written_by": "kata init",
              "files": {rel: hashlib.sha256((dest / rel).read_bytes()).hexdigest() for rel in graded}}
    (dest / RELEASE_FILE).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    written.append(RELEASE_FILE)
    leaks = scan(dest, root)
    if leaks:
        shutil.rmtree(dest, ignore_errors=True)
        raise Refusal("\n".join([f"reference code would leak into the kit {dest} ({len(leaks)} place(s)):",
                                 *(f"  {leak}" for leak in leaks)]), 1, where="init")
    return written


def _clone_root() -> Path | None:
    """The repository the running package was installed from (editable), if it has the reference."""
    root = PACKAGE.parent
    return root if (root / "solutions").is_dir() and (root / "reference").is_dir() else None


def help_fields() -> dict:
    """The ``{folder}`` of ``kata init``'s help texts."""
    return {"folder": INIT_FOLDER}


def init_command(folder: str = INIT_FOLDER) -> int:
    """``kata init [DIR]``: write a learner's kata to ``DIR`` (must not exist or be empty)."""
    dest = Path(folder).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise Refusal(t("init.not_empty", folder=folder), 2, where="init")
    kit = PACKAGE / KIT
    root = None if kit.is_dir() else _clone_root()
    if not kit.is_dir() and root is None:
        raise Refusal(t("init.no_kit", kit=kit), 2, where="init")
    from autograd_kata.core.student_copy import install, staged

    with staged(dest, "kata-init") as staging:
        if root is None:
            shutil.copytree(kit, staging, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            write_kit(root, staging)
        count = sum(1 for p in staging.rglob("*") if p.is_file())
        install(staging, dest)
    print(t("init.done", n=count, folder=dest))
    print(t("init.next", folder=folder))
    return 0
