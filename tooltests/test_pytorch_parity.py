"""The reference agrees with PyTorch in float64 on every operation of the table.

Needs torch (``python -m pip install -e ".[parity]"``); skipped without it."""
import importlib
import math

import pytest

from autograd_kata.core.manifest import STAGES
from autograd_kata.core.operations import BY_NAME, OPERATIONS

torch = pytest.importorskip("torch")

# every reference module whose backward() is whole: from stage 6 on, rules accumulate
# (stage 5's engine still assigns, as a learner first writes it, so a reused node,
# as in these examples, gets one share: stage 6 is where that is discovered)
MODULES = [f"solutions.{s.module}" for s in STAGES if s.number >= 6]


def micrograd_example(lib, Value):
    a, b = Value(-4.0), Value(2.0)
    c = a + b
    d = a * b + b ** 3
    c = c + c + 1
    c = c + 1 + c + (-a)
    d = d + d * 2 + lib(b + a)
    d = d + 3 * d + lib(b - a)
    e = c - d
    f = e ** 2
    g = f / 2.0
    g = g + 10.0 / f
    return a, b, g


@pytest.mark.parametrize("name", MODULES)
def test_micrograds_readme_example_matches_pytorch(name):
    engine = importlib.import_module(name)
    a, b, g = micrograd_example(lambda v: v.relu(), engine.Value)
    g.backward()
    ta, tb, tg = micrograd_example(torch.relu, lambda x: torch.tensor(x, dtype=torch.float64, requires_grad=True))
    tg.backward()
    assert math.isclose(g.data, tg.item(), rel_tol=1e-12)
    assert math.isclose(a.grad, ta.grad.item(), rel_tol=1e-12)
    assert math.isclose(b.grad, tb.grad.item(), rel_tol=1e-12)
    assert (round(g.data, 4), round(a.grad, 4), round(b.grad, 4)) == (24.7041, 138.8338, 645.5773)


# every operation of the table (autograd_kata/core/operations.py), with each constant a random
# graph draws for it; a binary op's second operand is v*v + 2 (never 0, so / is defined)
XS = (-1.3, 0.0, 0.7, 2.1)
CASES = [(op.name, c) for op in OPERATIONS for c in (op.consts or (0.0,))]
# and a few compositions, as a learner's expression mixes them
COMPOSITES = {
    "pow-1.5": (lambda v: (v * v + 1) ** -1.5, lambda t: (t * t + 1) ** -1.5),
    "div": (lambda v: 3.0 / (v * v + 2) + v / 7, lambda t: 3.0 / (t * t + 2) + t / 7),
    "sub-neg": (lambda v: 1 - v - (-v * v), lambda t: 1 - t - (-t * t)),
}


def defined(op, x, c):
    """Is ``op`` (and its slope) defined on plain floats at x, with a real value? (x ** 0.5 is not
    at -1.3, 2 / x not at 0.)"""
    xs = [x, x * x + 2][:op.arity]
    try:
        return all(isinstance(y, float | int) for y in (op.forward(xs, c), *op.derivative(xs, c)))
    except (ZeroDivisionError, ValueError, OverflowError):
        return False


def agree(engine, ours, theirs, x, what):
    v = engine.Value(x)
    y = ours(v) * ours(v)  # reuse: gradients must accumulate
    y.backward()
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ty = theirs(t) * theirs(t)
    ty.backward()
    assert math.isclose(y.data, ty.item(), rel_tol=1e-12, abs_tol=1e-12), \
        f"{what} at x = {x}: (f(x))^2 is {y.data!r} here, {ty.item()!r} in PyTorch"
    assert math.isclose(v.grad, t.grad.item(), rel_tol=1e-9, abs_tol=1e-12), \
        f"{what} at x = {x}: d/dx (f(x))^2 is {v.grad!r} here, {t.grad.item()!r} in PyTorch"


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize(("op", "c"), CASES, ids=[f"{n}-{c:g}" for n, c in CASES])
def test_each_op_and_its_gradient_match_pytorch(name, op, c):
    engine = importlib.import_module(name)
    op = BY_NAME[op]
    def ours(v):
        return op.value([v, v * v + 2][:op.arity], c)

    def theirs(t):
        xs = [t, t * t + 2][:op.arity]
        return op.value(xs, c) if op.twin is None else op.twin(torch, xs, c)

    xs = [x for x in XS if defined(op, x, c)]
    assert xs, f"{op.name} (c = {c:g}) is defined at none of {XS}: give the parity test a point where it is"
    for x in xs:
        agree(engine, ours, theirs, x, f"{op.name} ({op.text.format('v', 'v*v + 2', c=f'{c:g}')})")


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("composite", COMPOSITES)
@pytest.mark.parametrize("x", XS)
def test_compositions_and_their_gradients_match_pytorch(name, composite, x):
    ours, theirs = COMPOSITES[composite]
    agree(importlib.import_module(name), ours, theirs, x, composite)


def test_retain_graph_matches_pytorch():
    engine = importlib.import_module(MODULES[-1])
    a, b, d = engine.Value(2.0), engine.Value(-3.0), engine.Value(1.0)
    e = (a + b) * d
    e.backward(retain_graph=True)
    e.backward()
    ta, tb, td = (torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in (2.0, -3.0, 1.0))
    te = (ta + tb) * td
    te.backward(retain_graph=True)
    te.backward()
    assert (a.grad, b.grad, d.grad) == (ta.grad.item(), tb.grad.item(), td.grad.item())
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        e.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        te.backward()
