"""The stage manifest: the one place that names every stage.

Like rustlings' ``info.toml``, this list drives everything else: the stub
generator, the test parametrisation in ``tests/conftest.py``, the CLI, the
grader and the student release.  Nothing else in the repository may hard-code
the list of stages.  It imports nothing from the rest of ``kata`` but the message
catalogue (``core.i18n``, for the lessons' text, imported when one is read).

To add a stage: append a ``Stage`` here, write ``solutions/<module>.py`` with
solution markers, ``tests/test_<module>.py``, ``hints/en/<module>.md`` and
``hints/ja/<module>.md``, then run ``kata build`` and ``kata verify``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

LANGS = ("en", "ja")
IMPLS = ("exercises", "solutions")


@dataclass(frozen=True)
class Stage:
    number: int
    slug: str
    title: str
    points: int
    lesson_id: str  # catalogue id of what the stage taught, in one sentence (shown on success)

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
    Stage(1, "value", "Value skeleton", 10, "lesson.stage1"),
    Stage(2, "add_mul", "add and mul", 15, "lesson.stage2"),
    Stage(3, "coercion", "constants and reflected ops", 10, "lesson.stage3"),
    Stage(4, "tanh", "tanh and the same recipe", 15, "lesson.stage4"),
    Stage(5, "backward", "topological backward", 15, "lesson.stage5"),
    Stage(6, "accumulate", "accumulate with +=", 10, "lesson.stage6"),
    Stage(7, "zero_grad", "zero_grad and retain_graph", 10, "lesson.stage7"),
    Stage(8, "mlp", "a network that learns", 15, "lesson.stage8"),
)


def stage(number: int | str) -> Stage:
    """The stage with this number; ValueError naming the valid ones otherwise."""
    try:
        n = int(number)
    except (TypeError, ValueError):
        n = None
    for s in STAGES:
        if s.number == n:
            return s
    valid = ", ".join(str(s.number) for s in STAGES)
    raise ValueError(f"no stage {number!r}; the stages are {valid}")


def stage_of_module(module: str) -> Stage | None:
    """The stage whose module name ends ``module`` (``exercises.stage04_tanh``)."""
    name = module.rsplit(".", 1)[-1]
    for s in STAGES:
        if name in (s.module, f"test_{s.module}"):
            return s
    return None


def find_root(start: str | os.PathLike | None = None) -> Path:
    """The kata's root folder: the nearest one up from ``start`` (or the
    working directory) that holds ``exercises/`` and ``tests/``; failing that,
    the folder this package was installed from."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "exercises").is_dir() and (folder / "tests").is_dir():
            return folder
    return Path(__file__).resolve().parent.parent
