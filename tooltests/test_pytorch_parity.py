"""The reference agrees with PyTorch in float64 on every op it shares with micrograd.

Needs torch (``python -m pip install -e ".[parity]"``); skipped without it."""
import importlib
import math

import pytest

from autograd_kata.core.manifest import STAGES

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


OPS = {
    "tanh": (lambda v: v.tanh(), torch.tanh),
    "exp": (lambda v: v.exp(), torch.exp),
    "relu": (lambda v: v.relu(), torch.relu),
    "pow3": (lambda v: v ** 3, lambda t: t ** 3),
    "pow-1.5": (lambda v: (v * v + 1) ** -1.5, lambda t: (t * t + 1) ** -1.5),
    "div": (lambda v: 3.0 / (v * v + 2) + v / 7, lambda t: 3.0 / (t * t + 2) + t / 7),
    "sub-neg": (lambda v: 1 - v - (-v * v), lambda t: 1 - t - (-t * t)),
}


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("x", [-1.3, 0.0, 0.7, 2.1])
def test_each_op_and_its_gradient_match_pytorch(name, op, x):
    engine = importlib.import_module(name)
    ours, theirs = OPS[op]
    v = engine.Value(x)
    y = ours(v) * ours(v)  # reuse: gradients must accumulate
    y.backward()
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ty = theirs(t) * theirs(t)
    ty.backward()
    assert math.isclose(y.data, ty.item(), rel_tol=1e-12, abs_tol=1e-12)
    assert math.isclose(v.grad, t.grad.item(), rel_tol=1e-9, abs_tol=1e-12)


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
