"""Feel the answers: on a passing stage, a few lines from the learner's own code.

The manifest names what a stage shows (``Stage.feel``, names of
``DEMONSTRATIONS``); this module knows how to show each:

* ``plus_equals`` (stages 2-5, which assign on purpose): the article's ``+=`` is
  right too, and if the learner's own rules already add, that they are ready for
  the stage that needs it.  Only the learner's source is read, in this process;
* ``accumulate``: what the ``=`` rules the stage started from (its pristine stub)
  gave on ``a*a``, and what the learner's ``+=`` gives now;
* ``zero_grad_fit``: the same small fit with and without ``zero_grad()``;
* ``stale_closures``: one training step between two ``backward()`` calls on the
  learner's previous engine and this one: the retained closures give the slope
  at the old point, the true slope at the new one differs, and the refusal is
  what stops that silently;
* ``mlp_zero_grad``: the learner's MLP trained with and without ``zero_grad()``.

Every demonstration that runs the learner's engine runs in a child process
(``python -m autograd_kata.learner.feel N`` in the kata's root) with a time
limit, so a slow or broken engine costs a line of output, never the command;
each says only what the numbers it got bear out.  This module runs them; those that
read the learner's source are ``feel_source.py``'s, those that run the engine
``feel_engine.py``'s.
"""
from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from autograd_kata.core.i18n import child_env, t
from autograd_kata.learner.feel_engine import accumulate, mlp_zero_grad, stale_closures, zero_grad_fit
from autograd_kata.learner.feel_source import plus_equals

TIME_LIMIT = 20.0  # seconds for the whole demonstration


def feel(stage, root: Path) -> list[str]:
    """Lines to print under a passing stage (none for most stages): the ones that
    read the learner's source, then the ones that run their engine (in a child)."""
    lines = read(stage, root)
    if not runs_engine(stage):
        return lines
    try:
        env = {**child_env(), "PYTHONIOENCODING": "utf-8"}  # the learner's language, read back as UTF-8
        proc = subprocess.run([sys.executable, "-m", "autograd_kata.learner.feel", str(stage.number)],
                              cwd=root, env=env, capture_output=True, text=True, encoding="utf-8", errors="replace",
                              timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return [*lines, t("feel.too_slow", limit=f"{TIME_LIMIT:g}")]
    except OSError:
        return lines
    shown = proc.stdout.splitlines()
    if proc.returncode != 0 and not shown:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return [*lines, t("feel.failed", last=last)]
    return lines + shown


def read(stage, root: Path) -> list[str]:
    """The stage's demonstrations that only read the learner's source (one that
    cannot read it shows nothing: the stage's result stands without it)."""
    lines = []
    for name in (name for name in stage.feel if name in READS):
        with contextlib.suppress(Exception):
            lines += READS[name](stage, Path(root))
    return lines


def runs_engine(stage) -> bool:
    return any(name in RUNS for name in stage.feel)


def show(stage, root: Path) -> list[str]:
    """The stage's demonstrations that run the learner's engine (in the child, or in
    the page's worker): one failing costs its own lines, never the others'."""
    lines = []
    for name in (name for name in stage.feel if name in RUNS):
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # the learner's own prints are not our lines
                lines += RUNS[name](stage, Path(root))
        except Exception as error:  # noqa: BLE001 - the learner's engine may fail in any way
            lines.append(t("feel.failed", last=f"{type(error).__name__}: {error}"))
    return lines


READS = {"plus_equals": plus_equals}  # read the learner's source, in this process
RUNS = {  # run the learner's engine: in the child process
    "accumulate": accumulate,
    "zero_grad_fit": zero_grad_fit,
    "stale_closures": stale_closures,
    "mlp_zero_grad": mlp_zero_grad,
}
DEMONSTRATIONS = {**READS, **RUNS}


def main(argv=None) -> int:
    from autograd_kata.core.manifest import stage
    argv = sys.argv[1:] if argv is None else argv
    root = Path.cwd()
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    for shown in show(stage(argv[0]), root):
        print(shown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
