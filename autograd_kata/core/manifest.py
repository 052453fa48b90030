"""The stage manifest: the one place that names every stage.

Like rustlings' ``info.toml``, this list drives everything else: the stub
generator, the test parametrisation in ``tests/conftest.py``, the CLI, the
grader and the student release.  Nothing else in the repository may hard-code
the list of stages, nor assume which stage does what: a stage's *role* says it
(``ROLES``; ``role("mlp")`` is the stage ``kata train`` fits and ``kata graph``
draws by default), and its title and lesson are catalogue ids named here
(``check_ids`` names one the catalogue lacks).  It imports nothing from the rest
of ``kata`` but the message catalogue (``core.i18n``) and ``core.errors``.

To add a stage, run ``kata new-stage`` and follow docs/maintainers.md, "Adding a stage"
(a tool test, tooltests/test_add_stage.py, follows it in a scratch copy).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import MESSAGES, t

LANGS = ("en", "ja")
IMPLS = ("exercises", "solutions")


@dataclass(frozen=True)
class Stage:
    number: int
    slug: str
    title: str
    points: int
    lesson_id: str  # catalogue id of what the stage taught, in one sentence (shown on success)
    title_id: str  # catalogue id of the title the learner reads (``title`` is the maintainers' English)
    role: str = ""  # one of ROLES, or "" for a stage that only teaches
    # the demonstrations shown when the stage passes (learner/feel.py's DEMONSTRATIONS), in order
    feel: tuple[str, ...] = ()

    @property
    def lesson(self) -> str:
        """What the stage taught, in the learner's language (autograd_kata/locales/*.po)."""
        from autograd_kata.core.i18n import t
        return t(self.lesson_id)

    @property
    def module(self) -> str:
        return f"stage{self.number:02d}_{self.slug}"

    @property
    def marker(self) -> str:
        return f"stage{self.number}"

    @property
    def test_file(self) -> str:
        return f"tests/test_{self.module}.py"

    def source(self, impl: str = "exercises") -> str:
        return f"{impl}/{self.module}.py"

    def hint_file(self, lang: str = "en") -> str:
        return f"hints/{lang}/{self.module}.md"


STAGES: tuple[Stage, ...] = (
    Stage(1, "value", "Value skeleton", 10, "lesson.stage1", "title.stage1"),
    Stage(2, "add_mul", "add and mul", 15, "lesson.stage2", "title.stage2", feel=("plus_equals",)),
    Stage(3, "coercion", "constants and reflected ops", 10, "lesson.stage3", "title.stage3", feel=("plus_equals",)),
    Stage(4, "tanh", "tanh and the same recipe", 15, "lesson.stage4", "title.stage4", feel=("plus_equals",)),
    Stage(5, "backward", "topological backward", 15, "lesson.stage5", "title.stage5", feel=("plus_equals",)),
    Stage(6, "accumulate", "accumulate with +=", 10, "lesson.stage6", "title.stage6", feel=("accumulate",)),
    Stage(7, "zero_grad", "zero_grad and retain_graph", 10, "lesson.stage7", "title.stage7",
          feel=("zero_grad_fit", "stale_closures")),
    Stage(8, "mlp", "a network that learns", 15, "lesson.stage8", "title.stage8", role="mlp", feel=("mlp_zero_grad",)),
)


# What a stage may be for, beyond teaching: each role is held by exactly one stage.
ROLES = {
    "mlp": "its MLP(nin, nouts, seed=) and train(model, xs, ys, steps=, lr=) are what `kata train` "
           "fits, and its Value is what `kata graph` draws unless --stage says otherwise",
}


def role(name: str) -> Stage:
    """The stage that has role ``name`` (a key of ROLES)."""
    if name not in ROLES:
        raise KeyError(f"no role {name!r}; the roles are {', '.join(ROLES)}")
    holders = [s for s in STAGES if s.role == name]
    if len(holders) != 1:
        raise LookupError(f"role {name!r} is held by {len(holders)} stages in STAGES, not one")
    return holders[0]


class MissingMessage(Refusal, LookupError):
    """A stage names a catalogue id that the English catalogue lacks (exit code 1)."""


def check_ids() -> None:
    """Raise MissingMessage naming the first catalogue id a stage names (its title or
    lesson) that the English catalogue (autograd_kata/locales/en/) lacks; a command calls this before it
    shows titles, so an added stage without its messages is one line, not a traceback."""
    english = MESSAGES.catalogue("en").messages
    for s in STAGES:
        for field in ("title_id", "lesson_id"):
            msgid = getattr(s, field)
            if msgid not in english:
                raise MissingMessage(t("manifest.missing_id", n=s.number, field=field, id=msgid,
                                       where=f"autograd_kata/locales/{{en,ja}}/stage{s.number:02d}.po",
                                       recipe='docs/maintainers.md, "Adding a stage"'))


class NoSuchStage(Refusal, ValueError):
    """A stage number the manifest does not have (exit code 2): the message names the valid ones."""

    def __init__(self, message: str):
        super().__init__(message, code=2)


def stage(number: int | str) -> Stage:
    """The stage with this number; NoSuchStage (a ValueError, and a Refusal a command
    need not catch) naming the valid ones otherwise."""
    try:
        n = int(number)
    except (TypeError, ValueError):
        n = None
    for s in STAGES:
        if s.number == n:
            return s
    valid = ", ".join(str(s.number) for s in STAGES)
    raise NoSuchStage(t("manifest.no_stage", number=repr(number), valid=valid))


# --- the student copy (kata release): which files it holds, in which role ----
# Like Exercism's .meta/config.json, this names every file's role; `kata release`
# copies a file only if an entry matches it (fnmatch: `*` crosses folders) and
# EXCLUDED does not.  Roles:
#   exercise   the learner's own files: written afresh as stubs, never copied
#   test       the grader's tests: the Classroom workflow checks them by checksum
#   tool       the kata package (checked the same way), without maintainer/
#   doc        hints, pictures, licence, .gitignore
#   template   written from autograd_kata/templates/ or filtered
#              (README: the learner's part; pyproject.toml: no maintainer settings)
STUDENT_FILES: tuple[tuple[str, str], ...] = (
    ("exercises/*.py", "exercise"),
    ("tests/*.py", "test"),
    ("conftest.py", "test"),
    ("autograd_kata/*", "tool"),
    ("hints/*.md", "doc"),
    ("docs/pictures/*", "doc"),
    ("docs/article-map*.md", "doc"),  # the article map, which the learner's README links to
    ("LICENSE", "doc"),
    (".gitignore", "doc"),
    ("README.md", "template"),
    ("README.ja.md", "template"),  # the same README in Japanese, filtered the same way
    ("pyproject.toml", "template"),
)
# the learner's READMEs, one a language: each written through core.student_copy.student_readme
READMES: tuple[str, ...] = ("README.md", "README.ja.md")
# never in a student copy, even where an entry above matches: the maintainers'
# checks (the mistake catalogue quotes the reference), caches
STUDENT_EXCLUDED: tuple[str, ...] = ("autograd_kata/maintainer/*", "*/__pycache__/*", "*.pyc")
# protected by the Classroom workflow's checksums (besides the workflow itself)
PROTECTED_ROLES = ("test", "tool")
RELEASE_FILE = ".kata-release.json"  # written by kata release: the checksums of the released files


def student_role(path: str) -> str | None:
    """The role of ``path`` (relative, with /) in a student copy; None if it is not shipped."""
    from fnmatch import fnmatchcase

    if any(fnmatchcase(path, pattern) for pattern in STUDENT_EXCLUDED):
        return None
    for pattern, role in STUDENT_FILES:
        if fnmatchcase(path, pattern):
            return role
    return None


def is_student_copy(root: str | os.PathLike) -> bool:
    """True in a copy written by ``kata release`` (it has no reference and says so)."""
    return (Path(root) / RELEASE_FILE).is_file() and not (Path(root) / "solutions").is_dir()


def impl_problem(root: str | os.PathLike, impl: str) -> str | None:
    """Why the stage tests cannot run against ``impl`` here, in one line; None if they can.

    The root conftest calls this so that ``pytest --impl solutions`` in a
    student copy is one usage error instead of a failure per test."""
    if impl not in IMPLS:
        return f"--impl {impl!r}: choose one of {', '.join(IMPLS)}"
    if not (Path(root) / impl).is_dir():
        if impl == "solutions":
            return ("--impl solutions tests the reference, and this copy has no solutions/ "
                    "(a student copy never does): run plain `pytest` to test your code in exercises/")
        return f"--impl {impl}: there is no {impl}/ folder in {root}"
    return None


def package_mismatch(root: str | os.PathLike) -> str | None:
    """A warning when the running ``autograd_kata`` is not the one in ``root``:
    after a non-editable install, ``kata`` would otherwise run the installed
    tool while pytest (through the root conftest) imports the folder's copy."""
    theirs = Path(root) / "autograd_kata"
    here = Path(__file__).resolve().parent.parent
    if theirs.is_dir() and theirs.resolve() != here:
        return t("manifest.package_mismatch", here=here, theirs=theirs, root=Path(root))
    return None


def stage_of_module(module: str) -> Stage | None:
    """The stage whose module name ends ``module`` (``exercises.stage04_tanh``)."""
    name = module.rsplit(".", 1)[-1]
    for s in STAGES:
        if name in (s.module, f"test_{s.module}"):
            return s
    return None


INIT_FOLDER = "autograd-kata"  # where `kata init` writes a kata when it is given no folder


def source_url() -> str:
    """The kata's repository: the ``Source`` project URL of the installed
    package's metadata (pyproject.toml's ``[project.urls]``, written once)."""
    from importlib import metadata

    try:
        entries = metadata.metadata("autograd-kata").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        entries = []
    for entry in entries:
        label, _, url = entry.partition(",")
        if label.strip().lower() == "source":
            return url.strip()
    return "https://pypi.org/project/autograd-kata/"


class KataNotFound(Refusal, LookupError):
    """No kata checkout around the working directory (exit code 2)."""

    def __init__(self, message: str):
        super().__init__(message, code=2)


def find_root(start: str | os.PathLike | None = None) -> Path:
    """The kata's root folder: the nearest one up from ``start`` (or the
    working directory) that holds ``exercises/`` and ``tests/``.  Raises
    ``KataNotFound`` naming where it looked: it never falls back to the
    package's own folder (an installed package would then write into
    site-packages)."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "exercises").is_dir() and (folder / "tests").is_dir():
            return folder
    raise KataNotFound(t("manifest.not_found", here=here, folder=INIT_FOLDER, source=source_url()))
