"""Feel the answers, from the learner's engine (``feel.py`` runs these in a child process,
the page in its worker): what the ``=`` rules gave on ``a*a`` against ``+=``
(``accumulate``), a small fit with and without ``zero_grad()`` (``zero_grad_fit``), a
second ``backward()`` after a step on the previous stage's engine and this one
(``stale_closures``), and the MLP trained with and without ``zero_grad()``
(``mlp_zero_grad``).  Each says only what the numbers it got bear out; every training
step is ``core.training``'s."""
from __future__ import annotations

import importlib
import math
import types
from pathlib import Path

from autograd_kata.core.i18n import t
from autograd_kata.core.training import mse, step, update

# --- helpers ------------------------------------------------------------------------

def _g(x) -> str:
    """A number as the lines show it; anything else (an engine's grad that is not a
    number) is an error, so no line claims what it did not get."""
    if not _number(x):
        raise TypeError(f"expected a number, got {type(x).__name__}: {x!r}"[:200])
    return f"{x:.4g}"


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _close(a, b) -> bool:
    return _number(a) and _number(b) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _engine(stage):
    """The learner's module of ``stage``."""
    return importlib.import_module(f"exercises.{stage.module}")


def _before(stage):
    """The stage just before ``stage`` in the manifest."""
    from autograd_kata.core.manifest import STAGES
    return next(s for s in reversed(STAGES) if s.number < stage.number)


# --- accumulate: = against += on a*a --------------------------------------------

def _pristine_module(stage, root: Path):
    """The stage's module as the learner started it (for stage 6: every rule assigns)."""
    from autograd_kata.core.state import pristine_stub
    module = types.ModuleType(f"{stage.module}_as_you_started")
    code = compile(pristine_stub(stage, root), f"{stage.source('exercises')} (as you started it)", "exec")
    exec(code, module.__dict__)  # noqa: S102 - the kata's own stub, from solutions/ or the release
    return module


def square_slope(engine) -> float:
    a = engine.Value(3.0)
    b = a * a
    b.backward()
    return a.grad


def accumulate(stage, root: Path) -> list[str]:
    mine = _engine(stage)
    try:
        before = _g(square_slope(_pristine_module(stage, root)))
    except Exception as error:  # noqa: BLE001 - the stub may not run at all
        before = t("feel.an_error", kind=type(error).__name__)
    return [t("feel.stage6", before=before, after=_g(square_slope(mine)))]


# --- zero_grad_fit and stale_closures: y = w*x + b fitted to y = 2x - 1 ---------

XS = (-1.0, 0.0, 1.0, 2.0)
YS = tuple(2 * x - 1 for x in XS)  # the stage-7 test's fit
LR = 0.1


def line(engine, w: float = 0.0, b: float = 0.0):
    """The model y = w*x + b on ``engine`` (its ``Module``, if it has one)."""
    base = getattr(engine, "Module", object)

    class Line(base):  # type: ignore[misc, valid-type]
        def __init__(self):
            self.w, self.b = engine.Value(w), engine.Value(b)

        def __call__(self, x):
            return self.w * x + self.b

        def parameters(self):
            return [self.w, self.b]

        if base is object:  # an engine before Module: what zero_grad() does, by hand
            def zero_grad(self):
                self.w.grad = self.b.grad = 0.0

    return Line()


def line_fit(engine, zero_grad: bool, steps: int = 60, lr: float = LR) -> list[float]:
    """Every step's loss of the fit, with or without ``zero_grad()``."""
    model = line(engine)
    return [step(engine, model, XS, YS, lr, zero_grad) for _ in range(steps)]


def zero_grad_fit(stage, root: Path) -> list[str]:
    mine = _engine(stage)
    good, bad = line_fit(mine, True), line_fit(mine, False)
    return [t("feel.stage7_fit", steps=len(good), good=_g(good[-1]), bad=_g(bad[-1]))]


def after_a_step(engine, **first_call) -> dict:
    """One training step of the fit from w = b = 0, then a second ``backward()`` of
    the same loss, its graph built before the step.  ``w0``, ``slope`` (w.grad of
    the first pass), ``w1`` and ``b1`` (after the step), and ``second``: w.grad of
    the second pass, or the first sentence of the error that refused it; ``held``: whether
    a node between the loss and the parameters still held a grad when it began."""
    model = line(engine)
    loss = mse(engine, model, XS, YS)
    model.zero_grad()
    loss.backward(**first_call)
    got = {"w0": model.w.data, "slope": model.w.grad}
    update(model, LR)
    got.update(w1=model.w.data, b1=model.b.data)
    model.zero_grad()  # as the next step would: whatever comes now is the second pass alone
    got["held"] = interior_grad_held(loss)
    try:
        loss.backward()
    except RuntimeError as error:
        return {**got, "second": str(error).split(". ")[0].strip().rstrip(".")}
    return {**got, "second": model.w.grad}


def interior_grad_held(root) -> bool:
    """Some node of ``root``'s graph made by an operation (not a leaf) has a nonzero grad."""
    seen, todo = set(), [root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        children = list(getattr(node, "_prev", ()))
        if children and _number(node.grad) and node.grad != 0:
            return True
        todo += children
    return False


def true_slope(engine, w: float, b: float) -> float:
    """dloss/dw at (w, b), from a fresh forward pass."""
    model = line(engine, w, b)
    loss = mse(engine, model, XS, YS)
    model.zero_grad()
    loss.backward()
    return model.w.grad


def forward_slope(engine, w: float, b: float, h: float = 1e-6) -> float:
    """dloss/dw at (w, b) from the engine's forward values alone (central differences)."""
    def at(w):
        return mse(engine, line(engine, w, b), XS, YS).data
    return (at(w + h) - at(w - h)) / (2 * h)


def stale_closures(stage, root: Path) -> list[str]:
    """The stage's engine and the one before it: a second backward() after one step."""
    mine, earlier = _engine(stage), _before(stage)
    retained = after_a_step(mine, retain_graph=True)
    true = true_slope(mine, retained["w1"], retained["b1"])
    measured = forward_slope(mine, retained["w1"], retained["b1"])
    if not (_number(true) and math.isclose(true, measured, rel_tol=1e-5, abs_tol=1e-6)):
        # "the slope there is" would not be true: say what disagrees, and nothing else
        return [t("feel.stale_disagrees", w1=_g(retained["w1"]), grad=_g(true), measured=_g(measured))]
    common = {"w0": _g(retained["w0"]), "w1": _g(retained["w1"]), "slope": _g(retained["slope"]),
              "true": _g(true), "n": earlier.number, "lr": _g(LR)}
    try:
        earlier_run = after_a_step(_engine(earlier))
        old, held, kind = earlier_run["second"], earlier_run["held"], "RuntimeError"  # if it refused
    except Exception as error:  # noqa: BLE001 - the earlier stage may be unwritten; this one stands alone
        old, held, kind = None, False, type(error).__name__
    if not _number(old):
        lines = [t("feel.stale_step_failed", **common, kind=kind)]
    elif held and not _close(old, retained["slope"]) and not _close(old, true):  # where that number comes from
        lines = [t("feel.stale_step_added", **common, second=_g(old))]
    else:
        lines = [t("feel.stale_step", **common, second=_g(old))]
    second = retained["second"]
    if _close(second, retained["slope"]) and not _close(second, true):
        lines.append(t("feel.stale_retained_old", grad=_g(second)))
    elif isinstance(second, str):
        lines.append(t("feel.stale_retained_refused", error=second))
    else:
        lines.append(t("feel.stale_retained", grad=_g(second), true=_g(true)))
    refused = after_a_step(mine)["second"]
    lines.append(t("feel.stale_refuses", error=refused) if isinstance(refused, str)
                 else t("feel.stale_no_refusal", grad=_g(refused)))
    return lines


# --- mlp_zero_grad ------------------------------------------------------------

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


def mlp_zero_grad(stage, root: Path) -> list[str]:
    mine = _engine(stage)
    with_it, without = mlp_fit(mine, True), mlp_fit(mine, False)
    return [t("feel.stage8", good=_g(with_it), bad=_g(without))]
