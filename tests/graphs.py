"""Random expression graphs for the property tests: a net under the fixed examples.

``graphs(ops, reuse)`` is a Hypothesis strategy for a small graph built from a
stage's operations, written as a list of steps (the last one is the root).
Each step is ``(op, args, const)``: ``args`` are indices of earlier steps,
``const`` a plain number the op uses (a constant operand or an exponent).
``build`` makes the graph from the engine's Values; ``evaluate`` computes it
on plain floats, in the judge, so the truth never comes from the code under
test; ``slopes`` turns that into central differences for every step, leaves
and interior nodes alike.

With ``reuse=False`` (stages 2-5) every step is used at most once, so the
graph is a tree: a rule that assigns (=) is still right there, and stage 6
stays a discovery.  With ``reuse=True`` a step may feed several later ones.

The generator never produces a graph outside the ops' smooth domains: it
skips an op whose input would sit on a kink (relu near 0), overflow (exp),
leave pow's domain or divide by nearly 0, so no example is ever rejected.
"""
from __future__ import annotations

import os

from autograd_kata.core.i18n import t
from autograd_kata.core.operations import CONSTANTS, OPERATIONS, up_to

HIDDEN = os.environ.get("KATA_HIDDEN_SEED")
_PROFILES = []  # the profiles are registered once per process


def hypothesis():
    """Hypothesis with the kata's profile loaded, imported when a property test first runs:
    a learner's default run deselects them and does not pay a third of a second to import it.
    None in an old environment without it (the property tests skip, the examples still run).

    * By default the examples are the same on every run (``derandomize=True``, no example
      database): a learner never sees a test pass, then fail unchanged.
    * With ``KATA_HIDDEN_SEED`` set (grading), the examples come from that seed (derandomize
      off), so a submission meets examples its author could not read in advance.
    * No shrinking: a wrong engine is reported at its first failing example, in well under
      the per-test time limit (the generator starts small, so that example is small too)."""
    try:
        import hypothesis as found
        from hypothesis import HealthCheck, Phase, settings
    except ImportError:
        return None
    if not _PROFILES:
        common = dict(database=None, deadline=None, max_examples=40, print_blob=False,
                      phases=[Phase.explicit, Phase.reuse, Phase.generate],
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors,
                                             HealthCheck.function_scoped_fixture])
        settings.register_profile("kata", derandomize=True, **common)
        settings.register_profile("kata-hidden", derandomize=False, **common)
        settings.load_profile("kata-hidden" if HIDDEN else "kata")
        _PROFILES.append(True)
    return found


class _NoStrategies:
    """Stands in for hypothesis.strategies where Hypothesis is missing: for_all skips."""
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def strategies():
    """hypothesis.strategies, imported on first use (see ``hypothesis()``)."""
    found = hypothesis()
    return _NoStrategies() if found is None else found.strategies


#: every operation, declared once (name, stage, arity, forward, derivative, constants, domain):
#: autograd_kata/core/operations.py; this module only reads it
OPS = {op.name: op for op in OPERATIONS}
UNARY = {op.name for op in OPERATIONS if op.arity == 1}
BIG = 50.0  # no step's value grows past this: central differences stay accurate


def ops_up_to(stage: int) -> tuple[str, ...]:
    return tuple(op.name for op in up_to(stage))


def apply(op, xs, const):
    """One step on plain floats (the judge's own arithmetic)."""
    return OPS[op].forward(xs, const)


def smooth(op, xs, const) -> bool:
    """Is the op well away from a kink, an overflow or a pole at these inputs?"""
    return OPS[op].smooth(xs, const)


def graphs(ops, reuse, max_depth=4):
    """A list of steps ``(op, args, const)``; ``("leaf", (), value)`` steps are the inputs.
    A Hypothesis strategy (None without Hypothesis)."""
    st = strategies()
    if isinstance(st, _NoStrategies):
        return None

    @st.composite
    def steps_of_a_graph(draw):
        steps, values, used = [], [], []

        def add(step, value):
            steps.append(step)
            values.append(value)
            used.append(0)
            return len(steps) - 1

        def leaf():
            return add(("leaf", (), draw(st.integers(-20, 20)) / 10), None)

        def node(depth):
            if reuse and steps and draw(st.integers(0, 3)) == 0:
                return draw(st.integers(0, len(steps) - 1))  # an earlier step, used once more
            if depth == 0 or draw(st.integers(0, 3)) == 0:
                return leaf()
            op = draw(st.sampled_from(ops))
            args = (node(depth - 1),) if op in UNARY else (node(depth - 1), node(depth - 1))
            # an op without constants draws one too, unused: the examples stay what they were
            const = draw(st.sampled_from(OPS[op].consts or CONSTANTS))
            xs = [value_of(a) for a in args]
            if not smooth(op, xs, const):
                return args[0] if op in UNARY else add(("mul", args, None), xs[0] * xs[1])
            out = apply(op, xs, const)
            if abs(out) > BIG:
                return args[0]
            return add((op, args, const), out)

        def value_of(i):
            return steps[i][2] if steps[i][0] == "leaf" else values[i]

        root = node(max_depth)
        if root != len(steps) - 1:  # the root must be the last step: add a constant leaf to it,
            half = add(("leaf", (), 0.5), None)  # with + and a leaf, which every stage has
            add(("add", (root, half), None), None)  # (a constant operand, `+ 0.5`, needs stage 3)
        return steps

    return steps_of_a_graph()


def evaluate(steps, bump=None):
    """Every step's value on plain floats; ``bump = (i, h)`` adds h to step i's value."""
    values = []
    for i, (op, args, const) in enumerate(steps):
        value = const if op == "leaf" else apply(op, [values[a] for a in args], const)
        if bump is not None and bump[0] == i:
            value += bump[1]
        values.append(float(value))
    return values


def slopes(steps, h=1e-6):
    """d(root)/d(step) for every step, by central differences on plain floats."""
    return [(evaluate(steps, (i, h))[-1] - evaluate(steps, (i, -h))[-1]) / (2 * h) for i in range(len(steps))]


def build(engine, steps):
    """The graph made of the engine's Values: one node per step."""
    nodes = []
    for op, args, const in steps:
        if op == "leaf":
            nodes.append(engine.Value(const))
            continue
        nodes.append(_apply(op, [nodes[a] for a in args], const))
    return nodes


def _apply(op, xs, const):
    """One step on the engine's Values ``xs`` (and a plain number ``const``)."""
    return OPS[op].value(xs, const)


def describe(steps):
    """Each step as a readable formula over x0, x1, ... (the leaves) and n3, n4, ... (earlier steps)."""
    names, lines, k = [], [], 0
    for i, (op, args, const) in enumerate(steps):
        if op == "leaf":
            names.append(f"x{k}")
            lines.append(f"x{k} = {const:g}")
            k += 1
            continue
        a = [names[j] for j in args]
        const = 0.0 if const is None else const  # a binary op has no constant
        text = OPS[op].text.format(*a, c=f"{const:g}")
        names.append(f"n{i}")
        lines.append(f"n{i} = {text}")
    return names, "; ".join(lines)


def for_all(first, strategy, check):
    """``check(first)``, then ``check(example)`` for the examples Hypothesis draws from ``strategy``.

    ``first`` is a small fixed example: a stub that is not written yet, or an engine that is
    plainly wrong, fails there at once, before Hypothesis starts.  Under grading
    (KATA_HIDDEN_SEED set) the examples come from that seed; otherwise the profile loaded by
    ``hypothesis()`` makes them the same on every run."""
    import pytest

    check(first)
    found = hypothesis()
    if found is None:
        pytest.skip(t("props.no_hypothesis"))
    given, seed = found.given, found.seed

    # derandomized, Hypothesis seeds from this function's source: an edit here changes the examples
    @given(strategy)
    def every(example):
        check(example)

    (seed(int(HIDDEN))(every) if HIDDEN else every)()


#: a small graph every stage can build: (x0 + x1) * x2
SMALL = [("leaf", (), 1.5), ("leaf", (), -0.5), ("add", (0, 1), None), ("leaf", (), 2.0), ("mul", (2, 3), None)]


def expect_gradients(expect, engine, steps, how):
    """Build ``steps`` from the engine, walk them back and compare every node's grad with
    central differences.  ``how`` is "rules" (the test's own order, expect.backprop, with
    upstream 1.5: stages 2-4) or "backward" (the engine's backward(): stage 5 on)."""
    from expect import backprop

    nodes = build(engine, steps)
    names, formula = describe(steps)
    if how == "rules":
        upstream = 1.5
        backprop(nodes[-1], upstream)
        walk = t("props.walk_rules", root=names[-1])
    else:
        upstream = 1.0
        nodes[-1].backward()
        walk = t("props.walk_backward", root=names[-1])
    want = slopes(steps)
    from expect import close, show

    uses = [a for _, args, _ in steps for a in args]
    rule = t("props.rule")
    if len(uses) > len(set(uses)):
        rule = t("props.rule_reuse", rule=rule)

    wrong = [t("props.grad_is", name=name, got=show(getattr(node, "grad", None)), want=show(upstream * w))
             for name, node, w in zip(names, nodes, want)
             if not close(getattr(node, "grad", None), upstream * w, tol=1e-4)]
    if wrong:  # one hard failure (not pytest-check's soft ones), so Hypothesis can shrink the graph
        expect.fail(t("props.gradients", formula=formula, walk=walk, wrong=t("props.sep").join(wrong),
                      root=names[-1], rule=rule))


def expect_retained_twice(expect, engine, steps):
    """Stage 7 on a random graph: two backward(retain_graph=True) passes leave every leaf two
    copies of its slope and every interior node one; a plain third pass works, and a fourth
    is refused without changing a grad."""
    nodes = build(engine, steps)
    names, formula = describe(steps)
    want = slopes(steps)
    root = nodes[-1]
    try:
        root.backward(retain_graph=True)
        root.backward(retain_graph=True)
    except RuntimeError as error:
        expect.fail(t("props.second_retained_raised", formula=formula, said=repr(str(error)[:60])))
    from expect import close, show

    wrong = []
    for (op, _, _), name, node, w in zip(steps, names, nodes, want):
        copies = 2 if op == "leaf" else 1
        if not close(getattr(node, "grad", None), copies * w, tol=1e-4):
            wrong.append(t("props.grad_is", name=name, got=show(node.grad), want=show(copies * w)))
    if wrong:
        expect.fail(t("props.retained_twice", formula=formula, wrong=t("props.sep").join(wrong), root=names[-1]))
    try:
        root.backward()
    except RuntimeError as error:
        expect.fail(t("props.plain_after_retained_raised", formula=formula, said=repr(str(error)[:60])))
    before = [(node.data, node.grad) for node in nodes]
    try:
        root.backward()
    except RuntimeError:
        pass
    else:
        if any(op != "leaf" for op, _, _ in steps):
            expect.fail(t("props.not_refused", formula=formula))
    changed = [name for name, node, b in zip(names, nodes, before) if (node.data, node.grad) != b]
    if changed and any(op != "leaf" for op, _, _ in steps):
        expect.fail(t("props.refused_changed", formula=formula, changed=", ".join(changed)))
