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
each says only what the numbers it got bear out.  Every training step is
``core.training``'s.
"""
from __future__ import annotations

import ast
import contextlib
import importlib
import io
import math
import subprocess
import sys
import types
from pathlib import Path

from autograd_kata.core.i18n import child_env, t
from autograd_kata.core.training import mse, step, update

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


def _stage_showing(name: str):
    """The (first) stage whose manifest entry shows demonstration ``name``."""
    from autograd_kata.core.manifest import STAGES
    return next(s for s in STAGES if name in s.feel)


def _engine(stage):
    """The learner's module of ``stage``."""
    return importlib.import_module(f"exercises.{stage.module}")


def _before(stage):
    """The stage just before ``stage`` in the manifest."""
    from autograd_kata.core.manifest import STAGES
    return next(s for s in reversed(STAGES) if s.number < stage.number)


# --- plus_equals: the article's += while stages 2-5 assign ------------------------

def _own_methods(stage, root: Path) -> set[str] | None:
    """``Class.method`` names that the stage's untouched stub leaves to the learner
    (their body raises NotImplementedError); None if the stub cannot be found."""
    from autograd_kata.core.state import pristine_stub
    try:
        tree = ast.parse(pristine_stub(stage, root))
    except Exception:  # noqa: BLE001 - no stub to compare with: every rule counts
        return None
    own = set()
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        for fn in (node for node in cls.body if isinstance(node, ast.FunctionDef)):
            if any(isinstance(node, ast.Raise) and "NotImplementedError" in ast.unparse(node)
                   for node in ast.walk(fn)):
                own.add(f"{cls.name}.{fn.name}")
    return own


def grad_writes(source: str, own: set[str] | None = None) -> tuple[int, int]:
    """How the gradient rules in ``source`` write a ``.grad``: (with ``+=``, with ``=``).
    A rule is a function defined inside a method (a closure); only the methods in
    ``own`` count, if it is given."""
    adds = assigns = 0
    for cls in (node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)):
        for method in (node for node in cls.body if isinstance(node, ast.FunctionDef)):
            if own is not None and f"{cls.name}.{method.name}" not in own:
                continue
            rules = [node for node in ast.walk(method) if isinstance(node, ast.FunctionDef) and node is not method]
            for node in (node for rule in rules for node in ast.walk(rule)):
                if (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
                        and isinstance(node.target, ast.Attribute) and node.target.attr == "grad"):
                    adds += 1
                elif isinstance(node, ast.Assign) and any(isinstance(target, ast.Attribute) and target.attr == "grad"
                                                         for target in node.targets):
                    assigns += 1
    return adds, assigns


def plus_equals(stage, root: Path) -> list[str]:
    """One line: the article's += is right and stays right; the learner's own rules
    already add, if they do."""
    n = _stage_showing("accumulate").number
    try:
        source = (root / stage.source("exercises")).read_text(encoding="utf-8")
        adds, assigns = grad_writes(source, _own_methods(stage, root))
        if not adds + assigns:  # no rule of the learner's own (stages 3, 5): the module's given ones, as they are now
            adds, assigns = grad_writes(source)
    except (OSError, SyntaxError, ValueError):
        adds, assigns = 0, 0
    if adds and not assigns:
        return [t("feel.plus_equals_yours", n=n)]
    return [t("feel.plus_equals", n=n)]


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
    the second pass, or the first sentence of the error that refused it."""
    model = line(engine)
    loss = mse(engine, model, XS, YS)
    model.zero_grad()
    loss.backward(**first_call)
    got = {"w0": model.w.data, "slope": model.w.grad}
    update(model, LR)
    got.update(w1=model.w.data, b1=model.b.data)
    model.zero_grad()  # as the next step would: whatever comes now is the second pass alone
    try:
        loss.backward()
    except RuntimeError as error:
        return {**got, "second": str(error).split(". ")[0].strip().rstrip(".")}
    return {**got, "second": model.w.grad}


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
        old = after_a_step(_engine(earlier))["second"]
        kind = "RuntimeError"  # if it refused, as only a later stage should
    except Exception as error:  # noqa: BLE001 - the earlier stage may be unwritten; this one stands alone
        old, kind = None, type(error).__name__
    lines = [t("feel.stale_step", **common, second=_g(old)) if _number(old)
             else t("feel.stale_step_failed", **common, kind=kind)]
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
