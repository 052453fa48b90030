"""Feel the answers: on passing stages 6, 7 and 8, numbers from the learner's own engine.

* stage 6: what the ``=`` rules the stage started from (its pristine stub) gave
  on ``a*a``, and what the learner's ``+=`` gives now;
* stage 7: the same small fit with and without ``zero_grad()`` (final losses
  side by side), and what a second ``backward()`` did on the learner's stage-6
  engine against what it does now;
* stage 8: the learner's MLP trained with and without ``zero_grad()``.

The learner's code runs in a child process (``python -m
autograd_kata.learner.feel N`` in the kata's root) with a time limit, so a
slow or broken engine costs a line of output, never the command.
"""
from __future__ import annotations

import importlib
import subprocess
import sys
import types
from pathlib import Path

from autograd_kata.core.i18n import child_env, t
from autograd_kata.core.training import step

TIME_LIMIT = 20.0  # seconds for the whole demonstration
STAGES_WITH_NUMBERS = (6, 7, 8)


def feel(stage, root: Path) -> list[str]:
    """Lines to print under a passing stage (none for most stages)."""
    if stage.number not in STAGES_WITH_NUMBERS:
        return []
    try:
        env = {**child_env(), "PYTHONIOENCODING": "utf-8"}  # the learner's language, read back as UTF-8
        proc = subprocess.run([sys.executable, "-m", "autograd_kata.learner.feel", str(stage.number)],
                              cwd=root, env=env, capture_output=True, text=True, encoding="utf-8", errors="replace",
                              timeout=TIME_LIMIT)
    except subprocess.TimeoutExpired:
        return [t("feel.too_slow", limit=f"{TIME_LIMIT:g}")]
    except OSError:
        return []
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 and not lines:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return [t("feel.failed", last=last)]
    return lines


# --- in the child process: the learner's engine -----------------------------------

def _g(x) -> str:
    return f"{x:.4g}"


def _naive_stage6(root: Path):
    """The stage-6 module as the learner started it (every rule assigns)."""
    from autograd_kata.core.manifest import stage
    from autograd_kata.core.state import pristine_stub
    s = stage(6)
    module = types.ModuleType(f"{s.module}_as_you_started")
    code = compile(pristine_stub(s, root), f"{s.source('exercises')} (as you started it)", "exec")
    exec(code, module.__dict__)  # noqa: S102 - the kata's own stub, from solutions/ or the release
    return module


def square_slope(engine) -> float:
    a = engine.Value(3.0)
    b = a * a
    b.backward()
    return a.grad


def stage6(root: Path) -> list[str]:
    mine = importlib.import_module("exercises.stage06_accumulate")
    lines = []
    try:
        before = _g(square_slope(_naive_stage6(root)))
    except Exception as error:  # noqa: BLE001 - the stub may not run at all
        before = t("feel.an_error", kind=type(error).__name__)
    lines.append(t("feel.stage6", before=before, after=_g(square_slope(mine))))
    return lines


def line_fit(engine, zero_grad: bool, steps: int = 60, lr: float = 0.1) -> list[float]:
    """Fit y = w*x + b to points of y = 2x - 1 (the stage-7 test's fit)."""
    class Line(engine.Module):
        def __init__(self):
            self.w, self.b = engine.Value(0.0), engine.Value(0.0)

        def __call__(self, x):
            return self.w * x + self.b

        def parameters(self):
            return [self.w, self.b]

    model, xs, losses = Line(), [-1.0, 0.0, 1.0, 2.0], []
    for _ in range(steps):
        loss = sum(((model(x) - (2 * x - 1)) ** 2 for x in xs), engine.Value(0.0)) / len(xs)
        if zero_grad:
            model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        losses.append(loss.data)
    return losses


def two_backwards(engine, **first_call):
    """x.grad after one backward(**first_call) of y = x*x + x at x = 2, then after a
    second plain one; and the first sentence of the error, if it refused."""
    x = engine.Value(2.0)
    y = x * x + x
    y.backward(**first_call)
    first = x.grad
    try:
        y.backward()
    except RuntimeError as error:
        return first, x.grad, str(error).split(". ")[0].strip().rstrip(".")
    return first, x.grad, ""


def stage7(root: Path) -> list[str]:
    mine = importlib.import_module("exercises.stage07_zero_grad")
    good, bad = line_fit(mine, True), line_fit(mine, False)
    lines = [t("feel.stage7_fit", steps=len(good), good=_g(good[-1]), bad=_g(bad[-1]))]
    try:
        old = two_backwards(importlib.import_module("exercises.stage06_accumulate"))
        lines.append(t("feel.stage7_old", first=_g(old[0]), second=_g(old[1])))
    except Exception as error:  # noqa: BLE001 - stage 6 may be unwritten; stage 7 stands alone
        lines.append(t("feel.stage7_old_failed", kind=type(error).__name__))
    now = two_backwards(mine)
    retained = two_backwards(mine, retain_graph=True)
    said = (t("feel.stage7_refuses", error=now[2], grad=_g(now[1])) if now[2]
            else t("feel.stage7_gives", grad=_g(now[1])))
    lines.append(t("feel.stage7_now", said=said, first=_g(retained[0]), second=_g(retained[1])))
    return lines


def mlp_fit(engine, zero_grad: bool, steps: int = 40, lr: float = 0.1) -> float:
    """The learner's MLP on twelve points of two noisy blobs; the final loss."""
    import random
    rng = random.Random(1)
    xs = [[rng.gauss(1 if i % 2 else -1, 0.5), rng.gauss(-1 if i % 2 else 1, 0.5)] for i in range(12)]
    ys = [1.0 if i % 2 else -1.0 for i in range(12)]
    model = engine.MLP(2, [4, 4, 1], seed=0)
    loss = float("nan")  # no step: no loss
    for _ in range(steps):
        loss = step(engine, model, xs, ys, lr, zero_grad)
    return loss


def stage8(root: Path) -> list[str]:
    mine = importlib.import_module("exercises.stage08_mlp")
    with_it, without = mlp_fit(mine, True), mlp_fit(mine, False)
    return [t("feel.stage8", good=_g(with_it), bad=_g(without))]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path.cwd()
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    number = int(argv[0])
    for line in {6: stage6, 7: stage7, 8: stage8}[number](root):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
