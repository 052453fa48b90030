"""Stage 6: a node used twice gets gradient along both paths, so rules add (+=).

Every graph here reuses a node, so a rule that assigns (=) throws away a share
that has already arrived. Each rule test is built so that the rule under test
is the one that writes over a grad that is no longer zero."""
import math

from expect import Expect

expect = Expect(stage=6)


def assigns(rule):
    return f"the {rule} rule assigns (=) instead of adding (+=)"


SOME_RULE = "a rule assigns (=) instead of adding (+=)"


def test_mul_rule_adds_for_a_times_a(engine):
    a = engine.Value(3.0)
    y = a * a
    y.backward()
    expect.grads(f"d(a*a)/da = a + a = 2a, one share per operand slot: {assigns('mul')}", a=(a, 6.0))


def test_add_rule_adds_for_a_plus_a(engine):
    a = engine.Value(-1.5)
    y = a + a
    y.backward()
    expect.grads(f"d(a+a)/da = 1 + 1 = 2, one share per operand slot: {assigns('add')}", a=(a, 2.0))


def test_add_rule_adds_when_a_also_feeds_a_product(engine):
    a = engine.Value(2.5)
    y = (a + 1) * a
    y.backward()
    expect.grads("y = (a + 1) * a: the * rule hands a its share (a + 1) first, then the + rule adds 1 * a, "
                 f"so a.grad = 2a + 1: {assigns('add')}", a=(a, 6.0))


def test_mul_rule_adds_when_a_is_multiplied_by_itself_twice(engine):
    a = engine.Value(-2.0)
    y = a * a * a
    y.backward()
    expect.grads(f"d(a*a*a)/da = 3a^2 = 12, gathered along three paths: {assigns('mul')}", a=(a, 12.0))


def test_a_diamond_with_distinct_parents_sums_both_paths(engine):
    a, x, y = engine.Value(1.5), engine.Value(-2.0), engine.Value(0.5)
    b = a * x
    c = a + y
    d = b * c
    d.backward()
    # d = a*x*(a+y): dd/da = x*(a+y) + a*x = -4 + -3
    expect.grads("a feeds d via a*x (share -4) and via a+y (share -3), so a.grad = -7; the second share "
                 f"erased the first: {SOME_RULE}", a=(a, -7.0))


def test_an_interior_node_used_twice_sums_both_paths(engine):
    a, b = engine.Value(0.5), engine.Value(-4.0)
    h = a * b
    y = h * h + h
    y.backward()
    # y = h^2 + h with h = -2: dy/dh = 2h + 1 = -3
    expect.grads(f"h = a*b is used three times in y = h*h + h, so h.grad = 2h + 1 = -3: {SOME_RULE}", h=(h, -3.0))
    if abs(h.grad + 3.0) < 1e-9:  # with h.grad wrong, a and b are wrong too: one message is enough
        expect.true(abs(a.grad - 12.0) < 1e-9 and abs(b.grad + 1.5) < 1e-9,
                    f"h.grad is right but (a.grad, b.grad) = ({a.grad:g}, {b.grad:g}), expected (12, -1.5): "
                    f"{assigns('mul')}")


def test_one_leaf_in_two_losses_gets_both_gradients(engine):
    w = engine.Value(0.75)
    x1, x2 = engine.Value(2.0), engine.Value(-5.0)
    loss1 = w * x1
    loss2 = w * x2
    loss1.backward()
    expect.grads("after loss1 = w*x1 backward: dloss1/dw = x1", w=(w, 2.0))
    loss2.backward()
    expect.grads("w is used by two losses; after both backward() calls w.grad = x1 + x2 (the first share "
                 f"must survive the second pass): {assigns('mul')}",
                 w=(w, 2.0 + -5.0), x1=(x1, 0.75), x2=(x2, 0.75))


def test_tanh_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(0.5)
    y = a.tanh() + a
    y.backward()
    t = math.tanh(0.5)
    expect.grads(f"y = tanh(a) + a: a.grad = (1 - tanh(a)^2) + 1, and the + path arrives first: {assigns('tanh')}",
                 a=(a, (1 - t * t) + 1.0))


def test_exp_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(-0.7)
    y = a.exp() + a
    y.backward()
    expect.grads(f"y = exp(a) + a: a.grad = exp(a) + 1, and the + path arrives first: {assigns('exp')}",
                 a=(a, math.exp(-0.7) + 1.0))


def test_relu_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(2.0)
    y = a.relu() + a
    y.backward()
    expect.grads(f"y = relu(a) + a at a = 2: a.grad = 1 + 1, and the + path arrives first: {assigns('relu')}",
                 a=(a, 2.0))


def test_relu_rule_below_zero_keeps_what_is_there(engine):
    a = engine.Value(-3.0)
    y = a.relu() + a
    y.backward()
    expect.grads(f"y = relu(a) + a at a = -3: a.grad = 0 + 1; adding 0 must not erase the 1: {assigns('relu')}",
                 a=(a, 1.0))


def test_pow_rule_adds_to_a_grad_already_there(engine):
    a = engine.Value(1.5)
    y = a ** 3 + a
    y.backward()
    expect.grads(f"y = a**3 + a: a.grad = 3a^2 + 1, and the + path arrives first: {assigns('pow')}",
                 a=(a, 3 * 1.5 ** 2 + 1.0))


def test_a_divided_by_itself_has_gradient_zero(engine):
    a = engine.Value(4.0)
    y = a / a
    y.backward()
    expect.grads("a / a = a * a**-1 is constant, so a.grad = 1/a - a/a^2 = 0; the mul rule hands a its 1/a "
                 f"first, then a**-1 passes on -1/a: {assigns('pow')}",
                 a=(a, 0.0))
