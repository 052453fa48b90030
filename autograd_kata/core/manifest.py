"""The stage manifest: the one place that names every stage.

Like rustlings' ``info.toml``, this list drives everything else: the stub
generator, the test parametrisation in ``tests/conftest.py``, the CLI, the
grader and the student release.  Nothing else in the repository may hard-code
the list of stages.  It imports nothing from the rest of ``kata``.

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
    lesson: str  # what the stage taught, in one sentence (shown on success)

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
    Stage(1, "value", "Value skeleton", 10,
          "A Value is a number that remembers its gradient, its parents and how it was made."),
    Stage(2, "add_mul", "add and mul", 15,
          "Each operation builds a node and a closure that hands local derivative x out.grad to each parent."),
    Stage(3, "coercion", "constants and reflected ops", 10,
          "Plain numbers join the graph as constants, and subtraction is just addition of a negation."),
    Stage(4, "tanh", "tanh and the same recipe", 15,
          "A closure can remember the output, so tanh's slope 1 - t*t costs nothing extra; every new op follows one recipe."),
    Stage(5, "backward", "topological backward", 15,
          "backward() seeds the root with 1 and runs every node's rule once, outputs before inputs, without recursion."),
    Stage(6, "accumulate", "accumulate with +=", 10,
          "A node used twice receives gradient along both paths, so every rule must add (+=), never assign (=)."),
    Stage(7, "zero_grad", "zero_grad and retain_graph", 10,
          "Gradients pile up across backward() calls, so training zeroes them each step, and a spent graph refuses a second pass."),
    Stage(8, "mlp", "a network that learns", 15,
          "Neurons, layers and an MLP are just Values wired together, and gradient descent makes their loss fall."),
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


class KataNotFound(LookupError):
    """No kata checkout around the working directory."""


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
    raise KataNotFound(
        f"no kata here: looked for a folder holding both exercises/ and tests/ in {here} "
        f"and every folder above it. Run kata inside your copy of the kata (cd into it).")
