"""Stage 5: backward() - seed the root, then run every rule once, outputs first.

The contract, clause by clause:

- [order] root.topological_order() is a list of every node the root depends on
  (the leaves and the root itself included), each node once, every node
  after all of its inputs; the root comes last.
- [no-recursion] It needs no recursion: a 100,000-op chain works with the default
  recursion limit, and the limit is left as it was.
- [every-rule-once] backward() seeds root.grad = 1.0, then runs every node's _backward once,
  outputs first, so every node (interior ones too) ends with d(root)/d(node).
- [lone-leaf] backward() of a lone leaf gives it grad 1.0.
- [central-differences] backward() agrees with central differences on a mixed expression.

Each graph is walked back exactly once (later stage modules refuse a second
pass).  The graphs whose gradients are checked use every node once (trees):
a node reached along two paths is stage 6's subject.  The order tests use a
diamond, since an order must list a shared node once."""
import random
import sys

import pytest

from autograd_kata.core.i18n import t
from expect import Expect, close, hidden_seed, in_engine, numeric_grads
from graphs import SMALL, expect_gradients, for_all, graphs, ops_up_to

expect = Expect(stage=5)

# the rules each failure names, in the learner's language (autograd_kata/locales/*.po)
ONCE = t("s5.once")
INPUTS_FIRST = t("s5.inputs_first")
REVERSE = t("s5.reverse")
SEED = t("s5.seed")
NO_RECURSION = t("s5.no_recursion")

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
                t("s5.not_a_list", order=repr(order)))
    return order


def test_topological_order_lists_each_node_once(engine):
    *_, d = diamond(engine)
    order = order_of(d)
    ids = [id(node) for node in order]
    expect.true(len(ids) == len(set(ids)),
                t("s5.diamond_duplicates", entries=len(ids), distinct=len(set(ids)), once=ONCE))
    if len(order) < 6:  # too few nodes proves a node left out, not a missing visited set
        expect.fail(t("s5.diamond_too_few", entries=len(order)))
    expect.equal(len(order), 6, t("s5.diamond_len_what"), t("s5.diamond_len_rule", once=ONCE))


def test_topological_order_reaches_every_node(engine):
    a, x, y, b, c, d = diamond(engine)
    order = order_of(d)
    names = {"a": a, "x": x, "y": y, "a*x": b, "a+y": c, "d": d}
    missing = [name for name, node in names.items() if not any(n is node for n in order)]
    expect.true(not missing,
                t("s5.left_out", missing=", ".join(missing)))


def misplaced(order):
    """The first (node, input) pair of ``order`` where the node comes before its input, or None."""
    where = {id(node): i for i, node in enumerate(order)}
    for node in order:
        for parent in node._prev:
            if id(parent) in where and where[id(parent)] > where[id(node)]:
                return node, parent
    return None


def reachable(root):
    """Every node ``root`` depends on, by the test's own walk of _prev."""
    seen, stack = {id(root): root}, [root]
    while stack:
        for child in stack.pop()._prev:
            if id(child) not in seen:
                seen[id(child)] = child
                stack.append(child)
    return seen


def order_trouble(order, root=None):
    """What is wrong with ``order`` as an inputs-first order (of ``root``'s graph, when
    given), or None.  Names the learner's move only when the list proves it: an exactly
    reversed order, nodes left out."""
    ids = [id(node) for node in order]
    if root is not None:
        left_out = [repr(node) for key, node in reachable(root).items() if key not in set(ids)]
        if left_out:
            return t("s5.left_out", missing=", ".join(left_out[:4]))
    if len(ids) != len(set(ids)):
        return t("s5.duplicates", entries=len(ids), distinct=len(set(ids)), once=ONCE)
    wrong = misplaced(order)
    if wrong is None:
        return None
    node, parent = wrong
    said = t("s5.before_its_input", node=repr(node), op=node._op, parent=repr(parent), inputs_first=INPUTS_FIRST)
    if misplaced(order[::-1]) is None:
        return t("s5.exactly_reversed", said=said)
    return t("s5.append_when_done", said=said)


def test_topological_order_puts_inputs_before_outputs(engine):
    *_, b, c, d = diamond(engine)
    e = (d + b).tanh() * c
    order = order_of(e)
    trouble = order_trouble(order)
    if trouble:
        expect.fail(trouble)
    expect.true(order[-1] is e,
                t("s5.root_not_last", last=repr(order[-1]), inputs_first=INPUTS_FIRST))


def test_backward_seeds_the_root_with_one(engine):
    a, b = engine.Value(2.0), engine.Value(-3.0)
    f = a * b
    f.backward()
    expect.equal(f.grad, 1.0, t("s5.root_grad_what"), t("s5.root_grad_rule", seed=SEED))
    if close(a.grad, 0.0) and close(b.grad, 0.0):  # seeded, yet nothing reached the inputs
        expect.fail(t("s5.root_rule_skipped", grad=f.grad))
    expect.grads(t("s5.product_rule"), a=(a, -3.0), b=(b, 2.0))


def test_backward_of_a_leaf_gives_it_grad_one(engine):
    x = engine.Value(-7.0)
    x.backward()
    expect.equal(x.grad, 1.0, t("s5.leaf_what"), t("s5.leaf_rule", seed=SEED))


def test_backward_runs_the_rules_outputs_first(engine):
    # a chain of rules: each one can hand on its grad only after the one above it has run
    a, x = engine.Value(1.5), engine.Value(-2.0)
    y, z = engine.Value(0.5), engine.Value(3.0)
    b = a * x
    p = b + y
    d = p * z
    d.backward()
    want = {"a": (a, 3.0 * -2.0), "x": (x, 3.0 * 1.5), "y": (y, 3.0), "z": (z, -2.5), "b": (b, 3.0), "p": (p, 3.0)}
    right = all(close(node.grad, g) for node, g in want.values())
    if not right and order_trouble(d.topological_order(), d):  # the order tests say what is wrong with it
        expect.fail(t("s5.order_invalid", inputs_first=INPUTS_FIRST))
    # run inputs first, each rule hands on a grad of 0 before its own has arrived
    expect.grads(t("s5.outputs_first_rule"),
                 [(REVERSE, {"a": 0.0, "x": 0.0, "y": 0.0, "z": p.data})],
                 **want)


def test_backward_fills_in_interior_grads(engine):
    a, b, c, k = engine.Value(0.5), engine.Value(-1.5), engine.Value(2.0), engine.Value(-0.5)
    ab = a * b
    s = ab + c
    out = s * k
    out.backward()
    expect.grads(t("s5.interior_rule"),
                 s=(s, -0.5), k=(k, 1.25), ab=(ab, -0.5), c=(c, -0.5), a=(a, -0.5 * -1.5), b=(b, -0.5 * 0.5))


def mixed(a, b, c, d, e, f, g):
    """Every kind of op, each leaf once, relu and tanh away from their flat parts."""
    p = a * b + c.tanh()
    return p ** 2 / (d.exp() + 1) + (e - f).relu() * 3 - 2 / (g * 0.5 + 1)


def test_backward_matches_numeric_gradients(engine):
    xs = (1.5, -0.8, 0.3, -0.4, 2.0, 0.5, 1.2)
    leaves = [engine.Value(v) for v in xs]
    out = mixed(*leaves)
    out.backward()
    want = numeric_grads(lambda *v: mixed(*(engine.Value(t) for t in v)).data, *xs)
    expect.grads(t("s5.numeric_rule"),
                 **{name: (leaf, w) for name, leaf, w in zip("abcdefg", leaves, want)})


CHAIN = 100_000
WATCHED = 20_000  # a walk by recursion needs the limit raised 20-fold: watched, and cheaper than CHAIN


def chain_ops(seed, length):
    """The chain's shape and constants: op i is ("mul", c) or ("add", c), from random.Random(seed)
    (each slope within 1 % of +-1, so d(root)/d(node) stays readable 100,000 ops away)."""
    import math
    import random

    rng = random.Random(seed)
    return [("mul", rng.choice((-1.0, 1.0)) * math.exp(rng.uniform(-0.01, 0.01))) if rng.random() < 0.5
            else ("add", rng.uniform(-1.0, 1.0)) for _ in range(length)]


@in_engine
def seeded_chain(engine, seed, length, picks):
    """The chain of chain_ops(seed, length) (the same code, here where the engine lives), from a leaf of
    0.5: the nodes numbered ``picks`` (0 is the leaf, ``length`` the root).  The cyclic collector stays
    off until ``unlinked`` (fresh nodes by the hundred thousand: it would rescan them, seconds in all)."""
    import gc
    import math
    import random

    gc.disable()
    rng = random.Random(seed)
    ops = [("mul", rng.choice((-1.0, 1.0)) * math.exp(rng.uniform(-0.01, 0.01))) if rng.random() < 0.5
           else ("add", rng.uniform(-1.0, 1.0)) for _ in range(length)]
    nodes = [engine.Value(0.5)]
    for op, c in ops:
        nodes.append(nodes[-1] * c if op == "mul" else nodes[-1] + c)
    return [nodes[i] for i in picks]


@in_engine
def unlinked(engine, root):
    """Empty every ``_prev`` below ``root``, without recursion.  Freed as a chain, each node's last
    reference (its child's ``_prev``) would free the next inside CPython's C code, a recursion
    that overflows a browser's stack (Pyodide, ``kata site``) at about 1,500 nodes.  Then the cyclic
    collector is on again (the chain's builder turned it off)."""
    import gc

    todo = [root]
    while todo:
        node = todo.pop()
        todo.extend(getattr(node, "_prev", ()))
        node._prev = ()
    gc.enable()


def chain_grads(ops, picks):
    """What backward() gives each picked node of the chain: d(root)/d(node), the product of
    the slopes above it (worked here, by the judge, from the chain's own constants)."""
    grads, grad = {}, 1.0
    for i in range(len(ops), -1, -1):
        if i in picks:
            grads[i] = grad
        if i and ops[i - 1][0] == "mul":
            grad = ops[i - 1][1] * grad
    return grads


@in_engine.witness
def comparisons_in_backward(engine, length):
    """How many times backward() of a ``length``-node chain compared two Values with ==
    (``node in a_list`` does, once per entry; a set looks a node up by its hash)."""
    value = engine.Value
    own = value.__dict__.get("__eq__")
    count = [0]

    def counting_eq(a, b):
        count[0] += 1
        return own(a, b) if own is not None else NotImplemented

    v = value(0.5)
    for _ in range(length):
        v = value(0.5, (v,), "id")
    value.__eq__ = counting_eq
    try:
        v.backward()
    finally:
        if own is None:
            del value.__eq__
        else:
            value.__eq__ = own
    return count[0]


def expect_linear_time(engine):
    """A guard: fail with the learner's own counts when finding a visited node looks at every node
    seen so far: then 100,000 nodes would take ~10^10 steps (a hang), not a second."""
    small, big = 150, 300
    per_small = comparisons_in_backward(engine, small) / small
    per_big = comparisons_in_backward(engine, big) / big
    if per_big > 10 and per_big > 1.5 * per_small:
        expect.fail(t("s5.quadratic", small=small, big=big, per_small=f"{per_small:.0f}", per_big=f"{per_big:.0f}"))


@pytest.mark.own_stage_only  # the later modules carry the same order code, tested by every other test here
def test_a_100000_op_chain_needs_no_recursion(engine):
    """The judge's own check: backward() called here, every picked node's grad against the
    judge's product of slopes, on a chain whose shape the hidden seed picks when grading."""
    expect_linear_time(engine)
    seed = hidden_seed(2024)
    ops = chain_ops(seed, CHAIN)
    picks = sorted({0, 1, CHAIN // 2, CHAIN, *random.Random(seed + 1).sample(range(CHAIN), 3)})
    nodes = seeded_chain(engine, seed, CHAIN, picks)
    try:
        try:
            nodes[-1].backward()
        except RecursionError:
            expect.fail(t("s5.recursion_error", nodes=f"{CHAIN:,}", no_recursion=NO_RECURSION))
        want = chain_grads(ops, set(picks))
        expect.grads(t("s5.chain_rule"), **{f"node{i}": (node, want[i]) for i, node in zip(picks, nodes)})
    finally:
        unlinked(engine, nodes[-1])


@in_engine
def watched_chain(engine, length):
    """A chain of ``length`` one-input nodes whose rules do nothing, and a watch: some nodes'
    ``_prev`` is a set that notes, each time it is looked through, the recursion limit and how
    deep the stack is.  Returns (root, watch); the cyclic collector stays off until ``unlinked``."""
    import gc
    import sys

    gc.disable()

    class Watch:
        def __init__(self):
            self.limit_before, self.seen = sys.getrecursionlimit(), []

    class Watched(set):
        def __iter__(self):
            frame, depth = sys._getframe(), 0
            while frame is not None and depth < 10_000:
                frame, depth = frame.f_back, depth + 1
            watch.seen.append((sys.getrecursionlimit(), depth))
            return super().__iter__()

    watch = Watch()
    node = engine.Value(0.5)
    for i in range(length):
        node = engine.Value(0.5, (node,), "id")
        if i < 3 or i >= length - 3 or i == length // 2:
            node._prev = Watched(node._prev)
    return node, watch


@in_engine.witness
def what_the_watch_saw(engine, watch):
    """What the watch noted, and the recursion limit now: the sandbox's word (advisory)."""
    import sys

    return {"before": watch.limit_before, "seen": list(watch.seen), "after": sys.getrecursionlimit()}


@pytest.mark.own_stage_only
@pytest.mark.advisory  # the limit and the stack's depth are the sandbox's word (docs/instructors.md)
def test_backward_leaves_the_recursion_limit_alone(engine):
    """The limit itself is watched while backward() walks a 20,000-node chain (however it is raised),
    and the stack's depth at the chain's far end: a walk by recursion is one call deeper per node."""
    expect_linear_time(engine)
    root, watch = watched_chain(engine, WATCHED)
    try:
        try:
            root.backward()
        except RecursionError:
            expect.fail(t("s5.recursion_error", nodes=f"{WATCHED:,}", no_recursion=NO_RECURSION))
        saw = what_the_watch_saw(engine, watch)
    finally:
        unlinked(engine, root)
    before, after = saw["before"], saw["after"]
    limits = [limit for limit, _ in saw["seen"]]
    changed = next((n for n in [*limits, after] if n != before), None)
    if changed is None and before > max(LIMIT, 1000):
        changed = before  # raised when the module was imported
    expect.true(changed is None, t("s5.limit_changed", before=LIMIT, after=changed, no_recursion=NO_RECURSION))
    depths = [depth for _, depth in saw["seen"]]
    if depths:  # the walk looked through the watched nodes' inputs (for ..., list(), extend())
        expect.true(max(depths) - min(depths) < 200,
                    t("s5.walk_recursed", nodes=f"{WATCHED:,}", deep=max(depths) - min(depths),
                      no_recursion=NO_RECURSION))


@pytest.mark.properties
def test_random_graphs_match_central_differences(engine):
    """Random graphs of the operations, walked back by backward(): every node's grad against central differences."""
    for_all(SMALL, graphs(ops_up_to(4), reuse=False),
            lambda steps: expect_gradients(expect, engine, steps, "backward"))
