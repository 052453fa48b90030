"""Stage 6: a node used twice gets gradient along both paths, so rules add (+=).

The contract, clause by clause:

- [rules-add] Every gradient rule (+, *, tanh, exp, relu, **: the operations table's rules) adds its
  share into what a parent already holds: run on its own, a rule leaves parent.grad = before +
  share (tested by hand, one rule at a time).
- [paths-sum] A node reached along several paths (a*a, a+a, a*a*a, a diamond with
  distinct parents, an interior node used three times) ends with the sum
  of every path's share, whatever rule delivers the last share.
- [leaf-grads-kept] A leaf used by two losses keeps the first loss's share through the second
  backward(): backward() adds into leaf grads and never resets them.
- [agrees-with-pytorch] With reuse everywhere, backward() still agrees with PyTorch (micrograd's
  README example) and with central differences.

Stages 2 to 5 never reuse a node, so rules that assign (=) passed them; here
every graph reuses one.  A failure names "the X rule assigns (=)" only when
that rule, run by hand on a parent that already holds a gradient, is seen to
overwrite it; otherwise it states the rule and the numbers."""
import math

import pytest

from autograd_kata.core.i18n import t
from autograd_kata.core.operations import BY_NAME, rules
from expect import Expect, numeric_grads
from graphs import SMALL, expect_gradients, for_all, graphs, ops_up_to

expect = Expect(stage=6)


def assigns(rule):
    return t("s6.assigns", rule=rule)


# One rule at a time, for every operation with a closure of its own (autograd_kata/core/operations.py):
# (make the node from its parents, each parent's share for out.grad = 2).
PROBES = {op.name: (lambda *ps, op=op: op.value(list(ps), op.example),
                    lambda *xs, op=op: tuple(2.0 * d for d in op.derivative(list(xs), op.example)))
          for op in rules()}
START = (1.5, -0.5)   # data of the parents
HELD = (0.25, -0.75)  # what they hold before the rule runs


def rule_after(engine, op):
    """Run only ``op``'s rule, with out.grad = 2, on parents that already hold HELD;
    returns [(got, held, share), ...] per parent, or None if the rule raised."""
    make, shares = PROBES[op]
    n = BY_NAME[op].arity
    try:
        parents = [engine.Value(x) for x in START[:n]]
        for p, g in zip(parents, HELD):
            p.grad = g
        out = make(*parents)
        out.grad = 2.0
        out._backward()
        return [(p.grad, g, s) for p, g, s in zip(parents, HELD, shares(*START[:n]))]
    except Exception:  # noqa: BLE001 - a rule that crashes is another test's business
        return None


def assigning(engine, *ops):
    """Of ``ops``, the rules proven to assign: run by hand, they leave exactly the share and drop what was held."""
    proven = []
    for op in ops:
        seen = rule_after(engine, op)
        if seen and any(abs(got - share) < 1e-9 and abs(got - (held + share)) > 1e-9 for got, held, share in seen):
            proven.append(op)
    return proven


def because(engine, clause, *ops):
    """``clause``, plus the name of every rule among ``ops`` that is proven to assign."""
    proven = assigning(engine, *ops)
    if len(proven) == 1:
        return t("s6.because", clause=clause, assigns=assigns(proven[0]))
    if proven:
        return t("s6.because", clause=clause,
                 assigns=t("s6.assign_many", rules=t("s6.list_sep").join(proven[:-1]), last=proven[-1]))
    return clause


def test_every_rule_adds_into_what_a_parent_holds(engine):
    for op in PROBES:
        seen = rule_after(engine, op)
        expect.true(seen is not None, t("s6.rule_raised", op=op))
        for i, (got, held, share) in enumerate(seen):
            rule = t("s6.adds_share", held=f"{held:g}", op=op, share=f"{share:g}", total=f"{held + share:g}")
            if abs(got - share) < 1e-9:
                rule = t("s6.exactly_the_share", rule=rule, assigns=assigns(op))
            expect.equal(got, held + share, t("s6.parent_grad_what", i=i + 1, op=op), rule)


def test_mul_rule_adds_for_a_times_a(engine):
    a = engine.Value(3.0)
    y = a * a
    y.backward()
    expect.grads(because(engine, t("s6.a_times_a"), "mul"), a=(a, 6.0))


def test_add_rule_adds_for_a_plus_a(engine):
    a = engine.Value(-1.5)
    y = a + a
    y.backward()
    expect.grads(because(engine, t("s6.a_plus_a"), "add"), a=(a, 2.0))


def test_add_rule_adds_when_a_also_feeds_a_product(engine):
    a = engine.Value(2.5)
    y = (a + 1) * a
    y.backward()
    expect.grads(because(engine, t("s6.a_plus_1_times_a"), "add", "mul"), a=(a, 6.0))


def test_mul_rule_adds_when_a_is_multiplied_by_itself_twice(engine):
    a = engine.Value(-2.0)
    y = a * a * a
    y.backward()
    expect.grads(because(engine, t("s6.a_cubed"), "mul"), a=(a, 12.0))


def test_a_diamond_with_distinct_parents_sums_both_paths(engine):
    a, x, y = engine.Value(1.5), engine.Value(-2.0), engine.Value(0.5)
    b = a * x
    c = a + y
    d = b * c
    d.backward()
    # d = a*x*(a+y): dd/da = x*(a+y) + a*x = -4 + -3
    expect.grads(because(engine, t("s6.diamond"), "add", "mul"), a=(a, -7.0))


def test_an_interior_node_used_twice_sums_both_paths(engine):
    a, b = engine.Value(0.5), engine.Value(-4.0)
    h = a * b
    y = h * h + h
    y.backward()
    # y = h^2 + h with h = -2: dy/dh = 2h + 1 = -3, then a.grad = -3b, b.grad = -3a
    expect.grads(because(engine, t("s6.interior_three"), "add", "mul"),
                 h=(h, -3.0), a=(a, 12.0), b=(b, -1.5))


def test_backward_waits_for_every_share_before_passing_it_on(engine):
    # b reaches the root directly and through a longer path (b + y) * z, so b's
    # rule may run only after both shares have arrived.
    a, x = engine.Value(1.5), engine.Value(-2.0)
    y, z = engine.Value(0.5), engine.Value(3.0)
    b = a * x
    e = (b + y) * z
    d = b * e
    d.backward()
    # d = z * b**2 + y*z*b, dd/db = 2*z*b + y*z = -16.5, b = -3
    expect.grads(because(engine, t("s6.waits"), "add", "mul"),
                 b=(b, -16.5), a=(a, -16.5 * -2.0), x=(x, -16.5 * 1.5), y=(y, 3.0 * -3.0), z=(z, -3.0 * -2.5))


def test_one_leaf_in_two_losses_gets_both_gradients(engine):
    w = engine.Value(0.75)
    x1, x2 = engine.Value(2.0), engine.Value(-5.0)
    loss1 = w * x1
    loss2 = w * x2
    loss1.backward()
    expect.grads(t("s6.loss1"), w=(w, 2.0))
    loss2.backward()
    clause = t("s6.two_losses")
    if not assigning(engine, "mul") and abs(w.grad - -5.0) < 1e-9:
        clause = t("s6.leaf_reset", clause=clause)
    expect.grads(because(engine, clause, "mul"), w=(w, 2.0 + -5.0), x1=(x1, 0.75), x2=(x2, 0.75))


def test_tanh_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(0.5)
    y = a.tanh() + a
    y.backward()
    t = math.tanh(0.5)
    expect.grads(because(engine, "y = tanh(a) + a: a.grad = (1 - tanh(a)^2) + 1", "tanh", "add"),
                 a=(a, (1 - t * t) + 1.0))


def test_exp_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(-0.7)
    y = a.exp() + a
    y.backward()
    expect.grads(because(engine, "y = exp(a) + a: a.grad = exp(a) + 1", "exp", "add"), a=(a, math.exp(-0.7) + 1.0))


def test_relu_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(2.0)
    y = a.relu() + a
    y.backward()
    expect.grads(because(engine, t("s6.relu"), "relu", "add"), a=(a, 2.0))


def test_relu_rule_below_zero_keeps_what_is_there(engine):
    a = engine.Value(-3.0)
    y = a.relu() + a
    y.backward()
    expect.grads(because(engine, t("s6.relu_below"), "relu", "add"), a=(a, 1.0))


def test_pow_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(1.5)
    y = a ** 3 + a
    y.backward()
    expect.grads(because(engine, "y = a**3 + a: a.grad = 3a^2 + 1", "pow", "add"), a=(a, 3 * 1.5 ** 2 + 1.0))


def test_a_divided_by_itself_has_gradient_zero(engine):
    a = engine.Value(4.0)
    y = a / a
    y.backward()
    expect.grads(because(engine, t("s6.a_over_a"), "pow", "mul"), a=(a, 0.0))


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
    expect.equal(g.data, 24.70408163265306, t("s6.readme_what"), t("s6.readme_forward"))
    g.backward()
    # PyTorch (float64) gives 138.83381924198252 and 645.5772594752186
    expect.grads(because(engine, t("s6.readme"), *PROBES),
                 a=(a, 138.83381924198252), b=(b, 645.5772594752186))
    want = numeric_grads(lambda x, y: micrograd_readme(engine.Value, x, y)[2].data, -4.0, 2.0)
    expect.grads(t("s6.readme_numeric"),
                 a=(a, want[0]), b=(b, want[1]))


def mixed(a, b, c):
    """Every kind of op, nodes reused, relu and tanh away from their flat parts."""
    p = a * b + c.tanh()
    q = p ** 2 / (c.exp() + 1) + (a - b).relu() * 3
    return q - 2 / (b * b + 1) + (b - a).relu()


def test_backward_with_reuse_matches_numeric_gradients(engine):
    xs = (1.5, -0.8, 0.3)
    a, b, c = (engine.Value(v) for v in xs)
    out = mixed(a, b, c)
    out.backward()
    want = numeric_grads(lambda *v: mixed(*(engine.Value(t) for t in v)).data, *xs)
    expect.grads(because(engine, t("s6.reuse_numeric"), *PROBES),
                 a=(a, want[0]), b=(b, want[1]), c=(c, want[2]))


@pytest.mark.properties
def test_random_graphs_match_central_differences(engine):
    """Random graphs of the operations, nodes reused, walked back by backward(): every
    node's grad against central differences."""
    for_all(SMALL, graphs(ops_up_to(4), reuse=True),
            lambda steps: expect_gradients(expect, engine, steps, "backward"))
