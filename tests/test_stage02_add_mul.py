"""Stage 2: a + b and a * b build a node and a gradient rule.

The contract, clause by clause (one test each):

- [new-node] a + b is a new Value with data a.data + b.data; a * b one with a.data * b.data.
- [parents-and-label] The new node's _prev is {a, b} and its _op is '+' or '*'.
- [rules-hand-shares] Its _backward hands each parent its share, local derivative times out.grad:
  out.grad for both parents of +; b.data * out.grad to a and a.data * out.grad
  to b for *, also when an operand is 0 (a rule read off the output,
  out.data / a.data, divides by it).
- [operands-untouched] Building a node changes neither operand (data, grad, _prev).

The rules are tested by hand: set out.grad (never 1, so a missing `* out.grad`
shows), call out._backward(), and read the parents' grads.  Every graph here
uses each Value once: what a rule must do when a parent already holds a
gradient is the discovery of stage 6."""
import pytest

from autograd_kata.core.i18n import t
from expect import Expect
from graphs import SMALL, expect_gradients, for_all, graphs, ops_up_to

expect = Expect(stage=2)


def test_add_computes_the_sum(engine):
    a, b = engine.Value(2.0), engine.Value(-3.5)
    out = a + b
    expect.true(isinstance(out, engine.Value), t("s2.new_value", expr="a + b", got=repr(out)))
    expect.equal(out.data, -1.5, "(2.0 + -3.5).data", t("s2.add.data"))


def test_add_records_its_parents_and_op(engine):
    a, b = engine.Value(2.0), engine.Value(-3.5)
    out = a + b
    expect.equal(out._prev, {a, b}, "(a + b)._prev", t("s2.parents"))
    expect.equal(out._op, "+", "(a + b)._op", t("s2.label", op="'+'"))


def test_add_passes_out_grad_to_both_parents(engine):
    a, b = engine.Value(2.0), engine.Value(-3.5)
    out = a + b
    out.grad = 3.0
    out._backward()
    expect.grads(t("s2.add.rule"),
                 [(t("s2.m.forgot_upstream"), {"a": 1.0, "b": 1.0}),
                  (t("s2.m.hands_data"), {"a": -1.5, "b": -1.5})],
                 a=(a, 3.0), b=(b, 3.0))


def test_mul_computes_the_product(engine):
    a, b = engine.Value(2.0), engine.Value(-3.0)
    out = a * b
    expect.true(isinstance(out, engine.Value), t("s2.new_value", expr="a * b", got=repr(out)))
    expect.equal(out.data, -6.0, "(2.0 * -3.0).data", t("s2.mul.data"))


def test_mul_records_its_parents_and_op(engine):
    a, b = engine.Value(2.0), engine.Value(-3.0)
    out = a * b
    expect.equal(out._prev, {a, b}, "(a * b)._prev", t("s2.parents"))
    expect.equal(out._op, "*", "(a * b)._op", t("s2.label", op="'*'"))


def test_mul_gives_each_parent_the_other_operand(engine):
    a, b = engine.Value(2.0), engine.Value(-3.0)
    out = a * b
    out.grad = 5.0
    out._backward()
    expect.grads(t("s2.mul.rule"),
                 [(t("s2.m.swapped"), {"a": 10.0, "b": -15.0}),
                  (t("s2.m.forgot_upstream"), {"a": -3.0, "b": 2.0})],
                 a=(a, -15.0), b=(b, 10.0))


def test_mul_rule_multiplies_by_out_grad(engine):
    a, b = engine.Value(4.0), engine.Value(0.5)
    out = a * b
    out.grad = -2.0
    out._backward()
    expect.grads(t("s2.mul.chain"),
                 [(t("s2.m.forgot_upstream"), {"a": 0.5, "b": 4.0}),
                  (t("s2.m.swapped"), {"a": -8.0, "b": -1.0})],
                 a=(a, -1.0), b=(b, -8.0))


def test_mul_rule_holds_when_an_operand_is_zero(engine):
    """A rule read off the output (out.data / a.data for b) is right only while no operand is 0."""
    a, b = engine.Value(0.0), engine.Value(-4.0)
    out = a * b
    out.grad = 1.5
    try:
        out._backward()
    except ZeroDivisionError as raised:
        expect.fail(t("s2.mul.zero_divides", error=f"{type(raised).__name__}: {raised}"))
    expect.grads(t("s2.mul.zero"), a=(a, -6.0), b=(b, 0.0))


def test_arithmetic_leaves_the_operands_alone(engine):
    a, b = engine.Value(2.0), engine.Value(-3.0)
    a + b
    a * b
    expect.equal((a.data, b.data, a.grad, b.grad), (2.0, -3.0, 0.0, 0.0), "(a.data, b.data, a.grad, b.grad)",
                 t("s2.operands.alone"))
    expect.equal((a._prev, b._prev), (set(), set()), "(a._prev, b._prev)", t("s2.operands.leaves"))


@pytest.mark.properties
def test_random_graphs_match_central_differences(engine):
    """Random graphs of the stage's operations (+ and *): every node's grad against central differences."""
    for_all(SMALL, graphs(ops_up_to(2), reuse=False),
            lambda steps: expect_gradients(expect, engine, steps, "rules"))
