"""Stage 5: backward() - seed the root, then run every rule once, outputs first.

Each graph is walked back exactly once (later stage modules refuse a second
pass), and no interior node is shared between two backward() calls."""
import sys

import pytest

from expect import Expect, in_engine, numeric_grads

expect = Expect(stage=5)

ONCE = "each node once (no visited set?)"
INPUTS_FIRST = "topological_order lists inputs before outputs"
REVERSE = "reverse the topological order: outputs before inputs"
SEED = "seed the root: root.grad = 1.0"
NO_RECURSION = "without recursion (RecursionError on a deep graph)"

LIMIT = sys.getrecursionlimit()  # before any of your code has run


def diamond(engine):
    """a feeds d along two paths: b = a*x and c = a+y, d = b*c."""
    a, x, y = engine.Value(1.5), engine.Value(-2.0), engine.Value(0.5)
    b = a * x
    c = a + y
    d = b * c
    return a, x, y, b, c, d


def order_of(root):
    """root.topological_order(), or a one-line failure if it is not a non-empty list."""
    order = root.topological_order()
    expect.true(isinstance(order, list) and len(order) > 0,
                f"topological_order() returned {order!r}: return a list of nodes, inputs first, the root last")
    return order


def test_topological_order_lists_each_node_once(engine):
    *_, d = diamond(engine)
    order = order_of(d)
    ids = [id(node) for node in order]
    expect.true(len(ids) == len(set(ids)),
                f"topological_order() of the diamond d = (a*x) * (a+y) has {len(ids)} entries but only "
                f"{len(set(ids))} different nodes: {ONCE}")
    expect.equal(len(order), 6, "len(d.topological_order())",
                 f"a, x, y, a*x, a+y and d: {ONCE}")


def test_topological_order_reaches_every_node(engine):
    a, x, y, b, c, d = diamond(engine)
    order = order_of(d)
    names = {"a": a, "x": x, "y": y, "a*x": b, "a+y": c, "d": d}
    missing = [name for name, node in names.items() if not any(n is node for n in order)]
    expect.true(not missing,
                f"topological_order() left out {', '.join(missing)}: it must list every node the root "
                f"depends on, the leaves and the root itself included")


def test_topological_order_puts_inputs_before_outputs(engine):
    *_, b, c, d = diamond(engine)
    e = (d + b).tanh() * c
    order = order_of(e)
    where = {id(node): i for i, node in enumerate(order)}
    for node in order:
        for parent in node._prev:
            if id(parent) in where and where[id(parent)] > where[id(node)]:
                expect.fail(f"in topological_order() the node {node!r} ({node._op}) comes before its input "
                            f"{parent!r}: {INPUTS_FIRST} (reverse it in backward(), not here)")
    expect.true(order[-1] is e,
                f"topological_order() ends with {order[-1]!r}, expected the root itself: {INPUTS_FIRST}")


def test_backward_seeds_the_root_with_one(engine):
    a, b = engine.Value(2.0), engine.Value(-3.0)
    f = a * b
    f.backward()
    expect.equal(f.grad, 1.0, "f.grad after f.backward()", f"df/df = 1, {SEED}")
    expect.grads(f"f = a * b: df/da = b, df/db = a, once the root holds 1.0 (all 0? {SEED})",
                 a=(a, -3.0), b=(b, 2.0))


def test_backward_of_a_leaf_gives_it_grad_one(engine):
    x = engine.Value(-7.0)
    x.backward()
    expect.equal(x.grad, 1.0, "x.grad after x.backward() on a lone leaf", f"dx/dx = 1, {SEED}")


def test_backward_runs_the_rules_outputs_first(engine):
    # b reaches the root directly and through a longer path (b + y) * z, so b's
    # rule may run only after both shares have arrived.
    a, x = engine.Value(1.5), engine.Value(-2.0)
    y, z = engine.Value(0.5), engine.Value(3.0)
    b = a * x
    e = (b + y) * z
    d = b * e
    d.backward()
    # d = z * b**2 + y*z*b, dd/db = 2*z*b + y*z = -16.5, b = -3
    expect.grads(f"{REVERSE} (a node passes its grad on only once all of it has arrived)",
                 b=(b, -16.5), a=(a, -16.5 * -2.0), x=(x, -16.5 * 1.5), y=(y, 3.0 * -3.0), z=(z, -3.0 * -2.5))


def test_backward_fills_in_interior_grads(engine):
    a, b, c = engine.Value(0.5), engine.Value(-1.5), engine.Value(2.0)
    ab = a * b
    s = ab + c
    out = s * s
    out.backward()
    expect.grads("every node, interior ones too, ends with d(root)/d(node)",
                 s=(s, 2 * 1.25), ab=(ab, 2.5), c=(c, 2.5), a=(a, 2.5 * -1.5), b=(b, 2.5 * 0.5))


def mixed(V, a, b, c):
    """Every kind of op, nodes reused, relu and tanh away from their flat parts."""
    p = a * b + c.tanh()
    q = p ** 2 / (c.exp() + 1) + (a - b).relu() * 3
    return q - 2 / (b * b + 1) + (b - a).relu()


def test_backward_matches_numeric_gradients(engine):
    xs = (1.5, -0.8, 0.3)
    a, b, c = (engine.Value(v) for v in xs)
    out = mixed(engine.Value, a, b, c)
    out.backward()
    want = numeric_grads(lambda *v: mixed(engine.Value, *(engine.Value(t) for t in v)).data, *xs)
    expect.grads("backward() must agree with central differences (f(x+h) - f(x-h)) / 2h on a mixed expression",
                 a=(a, want[0]), b=(b, want[1]), c=(c, want[2]))


def micrograd_readme(V, a, b):
    a, b = V(a), V(b)
    c = a + b
    d = a * b + b**3
    c += c + 1
    c += 1 + c + (-a)
    d += d * 2 + (b + a).relu()
    d += 3 * d + (b - a).relu()
    e = c - d
    f = e**2
    g = f / 2.0
    g += 10.0 / f
    return a, b, g


def test_micrograd_readme_example(engine):
    a, b, g = micrograd_readme(engine.Value, -4.0, 2.0)
    expect.equal(g.data, 24.70408163265306, "g.data in micrograd's README example", "the forward pass")
    g.backward()
    # PyTorch (float64) gives 138.83381924198252 and 645.5772594752186
    expect.grads(f"micrograd's README example, checked against PyTorch ({REVERSE}; {ONCE})",
                 a=(a, 138.83381924198252), b=(b, 645.5772594752186))
    want = numeric_grads(lambda x, y: micrograd_readme(engine.Value, x, y)[2].data, -4.0, 2.0)
    expect.grads("micrograd's README example must also agree with central differences",
                 a=(a, want[0]), b=(b, want[1]))


@in_engine
def backward_of_a_100000_op_chain(engine, limit):
    """Build a 100,000-node chain and call backward() where the engine lives (the grader's sandbox
    too), with sys.setrecursionlimit replaced by a recorder; say what happened, as data."""
    import gc
    import itertools
    import sys

    raised, restore = [], sys.setrecursionlimit
    sys.setrecursionlimit = lambda n: raised.append(n)
    collecting = gc.isenabled()
    gc.disable()  # 100,000 fresh nodes: keep the cyclic collector from rescanning them while we build
    try:
        # 100,000 one-input nodes in a row; each node's rule only counts that it ran
        rules_run = itertools.count()
        v = engine.Value(0.5)
        for _ in range(100_000):
            v = engine.Value(0.5, (v,), "id")
            v._backward = rules_run.__next__
        try:
            v.backward()
        except RecursionError:
            return {"recursion_error": True}
        return {"recursion_error": False, "raised": raised, "now": sys.getrecursionlimit(),
                "rules_run": next(rules_run)}
    finally:
        sys.setrecursionlimit = restore
        restore(limit)
        if collecting:
            gc.enable()


@pytest.mark.own_stage_only  # the later modules carry the same order code, tested by every other test here
def test_a_100000_op_chain_needs_no_recursion(engine):
    ran = backward_of_a_100000_op_chain(engine, LIMIT)
    if ran["recursion_error"]:
        expect.fail(f"backward() of a 100,000-node chain raised RecursionError: build the order {NO_RECURSION}; "
                    f"use a list as your own stack")
    raised, now = ran["raised"], ran["now"]
    expect.true(not raised and now == LIMIT,
                f"the recursion limit was changed ({LIMIT} -> {raised or now}): do not raise it, "
                f"build the order {NO_RECURSION}")
    expect.equal(ran["rules_run"], 100_000, "the number of rules backward() ran on a 100,000-node chain",
                 f"every node's _backward runs, and {ONCE}")
