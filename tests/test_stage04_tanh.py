"""Stage 4: tanh, whose slope is read off its output, and the same recipe for
exp, relu, ** and /.

The contract, clause by clause:

- [new-nodes] x.tanh(), x.exp(), x.relu(), x ** n are new nodes with the one parent x
  and the labels 'tanh', 'exp', 'ReLU', f'**{n}'; their data is math.tanh,
  math.exp, max(x, 0), x.data ** n.
- [slopes] Each rule hands x its local slope times out.grad: 1 - t*t (t the output),
  e^x (the output), 1 above 0 and 0 at or below 0 (as PyTorch), n*x**(n-1).
- [edges] At the edges the numbers stay numbers: tanh of +-50 or +-800 is +-1 with
  slope exactly 0; e^-1000 is 0 with slope 0; e^1000 raises OverflowError as
  math.exp does; x**2, x**3 at 0 have slope 0, x**1 slope 1, x**0 slope 0.
- [value-exponent-refused] A Value exponent is a TypeError of __pow__'s own (not Python's for
  float ** Value) whose message names the type Value, in any language.
- [division] a / b is a * b**-1, n / v is n * v**-1 (graph ops, so both slopes flow);
  dividing by Value(0) raises ZeroDivisionError.
- [composition] The ops compose: the gradient of a formula matches central differences.

Gradients are checked without backward() (that is stage 5): the test sets the
output's grad to an upstream value that is never 1 and runs the node's own
_backward() (or, for / which is built from * and **, every node's through
expect.backprop).  Where the numbers that came are exactly what a classic
mistake produces, the message names that mistake."""
import math

import pytest

from autograd_kata.core.i18n import t
from autograd_kata.core.operations import OPERATIONS
from expect import Expect, backprop, close, expect_table_method, numeric_grads
from graphs import SMALL, expect_gradients, for_all, graphs, ops_up_to

expect = Expect(stage=4)

FORGOT_UPSTREAM = t("s2.m.forgot_upstream")
TANH_FROM_OUTPUT = t("s4.tanh.from_output")
TANH_SQUARED = t("s4.tanh.squared")
RELU_AT_ZERO = t("s4.relu.at_zero")
POW_RULE = t("s4.pow.rule_short")


grads = expect.grads


def swapped(rule, got, right, wrong, wrong_number):
    """``rule``, naming the swapped operands (``right`` is not ``wrong``) only when ``got``
    is the swapped quotient ``wrong_number``."""
    return t("s4.swapped", rule=rule, right=right, wrong=wrong) if close(got, wrong_number) else rule


def one_step(out, upstream):
    """Run only out's own rule, with ``upstream`` arriving at out."""
    out.grad = upstream
    out._backward()


def expect_unary_node(engine, out, x, op, what):
    expect.true(isinstance(out, engine.Value), t("s2.new_value", expr=what, got=repr(out)))
    expect.equal(out._prev, {x}, f"{what}._prev", t("s4.one_parent"))
    expect.equal(out._op, op, f"{what}._op", t("s2.label", op=repr(op)))


# every Value method of the operations table this stage adds: its value, label and slope ------

@pytest.mark.parametrize("op", [op for op in OPERATIONS if op.stage == 4 and op.method and op.arity == 1],
                         ids=lambda op: op.name)
def test_each_method_of_the_stage_computes_its_value_and_slope(engine, op):
    expect_table_method(expect, engine, op)


# tanh: the closure remembers the output t ------------------------------------------

def test_tanh_computes_the_hyperbolic_tangent(engine):
    for x0 in (0.8, -1.3):
        x = engine.Value(x0)
        out = x.tanh()
        expect_unary_node(engine, out, x, "tanh", f"Value({x0}).tanh()")
        expect.equal(out.data, math.tanh(x0), f"Value({x0}).tanh().data",
                     t("s4.value_is", op="tanh", fn="math.tanh(x)"))


def test_tanh_slope_comes_from_its_output(engine):
    x0, up = 0.8, -1.5
    x = engine.Value(x0)
    out = x.tanh()
    one_step(out, up)
    (slope,) = numeric_grads(math.tanh, x0)
    th = math.tanh(x0)  # the output t of the rule
    grads(t("s4.tanh.rule"),
          [(TANH_FROM_OUTPUT, {"x": (1 - x0 * x0) * up}),
           (TANH_SQUARED, {"x": (1 - th) * up}),
           (FORGOT_UPSTREAM, {"x": 1 - th * th})],
          x=(x, slope * up))


# exp: the output is the slope ------------------------------------------------------

def test_exp_computes_e_to_the_x(engine):
    for x0 in (0.7, -2.0):
        x = engine.Value(x0)
        out = x.exp()
        expect_unary_node(engine, out, x, "exp", f"Value({x0}).exp()")
        expect.equal(out.data, math.exp(x0), f"Value({x0}).exp().data", t("s4.value_is", op="exp", fn="math.exp(x)"))


# at 0 too: a slope written as out.data / x * x (equal wherever x is not 0) divides by zero there
@pytest.mark.parametrize("x0", [0.7, 0.0], ids=["positive", "zero"])
def test_exp_slope_is_its_own_output(engine, x0):
    up = -2.0
    x = engine.Value(x0)
    out = x.exp()
    one_step(out, up)
    (slope,) = numeric_grads(math.exp, x0)
    e = math.exp(x0)
    grads(t("s4.exp.rule"),
          [(t("s4.exp.not_x"), {"x": x0 * up}),
           (t("s4.exp.not_xe"), {"x": x0 * math.exp(x0 - 1) * up}),
           (FORGOT_UPSTREAM, {"x": e})],
          x=(x, slope * up))


# relu: slope 1 above 0, 0 at and below 0 ---------------------------------------------

def test_relu_passes_a_positive_input(engine):
    for x0 in (0.4, 1.7):
        x = engine.Value(x0)
        out = x.relu()
        expect_unary_node(engine, out, x, "ReLU", f"Value({x0}).relu()")
        expect.equal(out.data, x0, f"Value({x0}).relu().data", t("s4.relu.positive"))
        one_step(out, -2.5)
        grads(t("s4.relu.rule"), [(FORGOT_UPSTREAM, {"x": 1.0})], x=(x, -2.5))


def test_relu_blocks_a_negative_input(engine):
    x = engine.Value(-0.6)
    out = x.relu()
    expect_unary_node(engine, out, x, "ReLU", "Value(-0.6).relu()")
    expect.equal(out.data, 0.0, "Value(-0.6).relu().data", t("s4.relu.negative"))
    one_step(out, -2.5)
    grads(RELU_AT_ZERO, x=(x, 0.0))


def test_relu_slope_is_zero_at_exactly_zero(engine):
    x = engine.Value(0.0)
    out = x.relu()
    expect.equal(out.data, 0.0, "Value(0.0).relu().data", t("s4.relu.zero_data"))
    one_step(out, 4.0)
    grads(t("s4.relu.exactly_zero"), x=(x, 0.0))


# pow: the exponent is a plain number ---------------------------------------------------

@pytest.mark.parametrize("x0, n", [(1.5, 3), (2.0, -2), (2.25, 0.5)], ids=["int", "negative", "float"])
def test_pow_computes_the_power_and_labels_it(engine, x0, n):
    x = engine.Value(x0)
    out = x ** n
    expect_unary_node(engine, out, x, f"**{n}", f"Value({x0}) ** {n}")
    expect.equal(out.data, x0 ** n, f"(Value({x0}) ** {n}).data", t("s4.pow.data"))


# a negative base too: abs(x) ** (n-1) equals x ** (n-1) wherever x > 0
@pytest.mark.parametrize("x0, n, up", [(1.5, 3, -2.0), (2.0, -2, 3.0), (2.25, 0.5, -4.0), (-1.5, 2, 3.0)],
                         ids=["int", "negative", "float", "negative_base"])
def test_pow_slope_is_n_times_x_to_the_n_minus_1(engine, x0, n, up):
    x = engine.Value(x0)
    out = x ** n
    one_step(out, up)
    (slope,) = numeric_grads(lambda a: a ** n, x0)
    grads(t("s4.pow.rule"),
          [(POW_RULE, {"x": n * x0 ** n * up}),
           (POW_RULE, {"x": n * x0 ** (n + 1) * up}),
           (t("s4.pow.no_n"), {"x": x0 ** (n - 1) * up}),
           (FORGOT_UPSTREAM, {"x": n * x0 ** (n - 1)})],
          x=(x, slope * up))


def test_pow_refuses_a_value_exponent(engine):
    v, exponent = engine.Value(3.0), engine.Value(2)
    error = expect.raises(TypeError, lambda: v ** exponent,
                          t("s4.pow.value_exponent"))
    try:  # what Python itself says when nothing checks the exponent: float ** Value
        v.data ** exponent
    except TypeError as own:
        pythons = str(own)
    else:
        pythons = None
    said = str(error)
    expect.true(said != pythons and type(exponent).__name__ in said,
                t("s4.pow.name_it", said=repr(said), name=type(exponent).__name__))


# division: a / b = a * b**-1 ----------------------------------------------------------

def test_truediv_divides_and_passes_both_slopes(engine):
    a, b = engine.Value(3.0), engine.Value(-1.5)
    out = a / b
    expect.true(isinstance(out, engine.Value), t("s2.new_value", expr="a / b", got=repr(out)))
    expect.equal(out.data, -2.0, "(Value(3.0) / Value(-1.5)).data",
                 swapped(t("s4.div.data"), out.data, "a / b", "b / a", -0.5))
    up = 2.0
    backprop(out, up)
    grads(t("s4.div.rule"),
          [(t("s2.m.swapped"), {"a": -3.0 / 1.5 ** 2 * up, "b": 1 / -1.5 * up}),
           (FORGOT_UPSTREAM, {"a": 1 / -1.5, "b": -3.0 / 1.5 ** 2}),
           (t("s4.div.detached", expr="a / b"), {"a": 0.0, "b": 0.0})],
          a=(a, 1 / -1.5 * up), b=(b, -3.0 / 1.5 ** 2 * up))


def test_truediv_by_a_number(engine):
    v = engine.Value(3.0)
    out = v / 4
    expect.true(isinstance(out, engine.Value), t("s2.new_value", expr="v / 4", got=repr(out)))
    expect.equal(out.data, 0.75, "(Value(3.0) / 4).data",
                 swapped(t("s4.div.by_number"), out.data, "v / 4", "4 / v", 4 / 3))
    backprop(out, -2.0)
    grads(t("s3.times_up", slope="d(v/4)/dv = 1/4"),
          [(FORGOT_UPSTREAM, {"v": 0.25}), (t("s4.div.detached", expr="v / 4"), {"v": 0.0})],
          v=(v, -0.5))


def test_rtruediv_divides_the_number_by_self(engine):
    v = engine.Value(0.8)
    out = 2 / v
    expect.true(isinstance(out, engine.Value),
                t("s3.reflected", expr="2 / v", got=repr(out), left="int / Value", method="__rtruediv__"))
    expect.equal(out.data, 2.5, "(2 / Value(0.8)).data",
                 swapped(t("s4.rtruediv.rule"), out.data, "2 / v", "v / 2", 0.4))
    up = -1.5
    backprop(out, up)
    grads(t("s3.times_up", slope="d(2/v)/dv = -2/v**2"),
          [(t("s3.m.swapped", right="2 / v", wrong="v / 2"), {"v": 0.5 * up}), (FORGOT_UPSTREAM, {"v": -2 / 0.64}),
           (t("s4.div.detached", expr="2 / v"), {"v": 0.0})],
          v=(v, -2 / 0.64 * up))


def test_rtruediv_of_zero_is_zero(engine):
    """0 / v is 0, flat in v: a rewrite such as (v / other) ** -1, equal wherever other is not 0,
    divides by zero here."""
    v = engine.Value(0.8)
    out = 0 / v
    expect.true(isinstance(out, engine.Value),
                t("s3.reflected", expr="0 / v", got=repr(out), left="int / Value", method="__rtruediv__"))
    expect.equal(out.data, 0.0, "(0 / Value(0.8)).data", t("s4.rtruediv.rule"))
    backprop(out, -1.5)
    grads(t("s3.times_up", slope="d(0/v)/dv = -0/v**2 = 0"), v=(v, 0.0))


@pytest.mark.parametrize("expression, make", [
    ("v / Value(0.0)", lambda engine: engine.Value(3.0) / engine.Value(0.0)),
    ("1 / Value(0.0)", lambda engine: 1 / engine.Value(0.0)),
], ids=["value_by_zero", "number_by_zero"])
def test_division_by_zero_is_a_zero_division_error(engine, expression, make):
    expect.raises(ZeroDivisionError, lambda: make(engine),
                  t("s4.div.zero", expr=expression))


# all together ------------------------------------------------------------------------

def test_the_ops_compose_like_the_math(engine):
    def f(a, b, c, d, e, tanh, exp, relu):  # each variable once: reuse is stage 6's subject
        return tanh(a * b) + exp(c) / (1 + d ** 2) - 2 / (relu(e) + 1.5) ** 0.5

    v_tanh, v_exp, v_relu = (lambda v: v.tanh()), (lambda v: v.exp()), (lambda v: v.relu())

    def number(*xs):
        return f(*xs, math.tanh, math.exp, lambda x: max(x, 0.0))

    xs = (0.8, 0.6, -0.4, 1.2, 0.3)
    leaves = [engine.Value(x) for x in xs]
    out = f(*leaves, v_tanh, v_exp, v_relu)
    expect.equal(out.data, number(*xs), "(tanh(ab) + e^c / (1 + d**2) - 2 / (relu(e) + 1.5)**0.5).data",
                 t("s4.compose.data"))
    want = numeric_grads(number, *xs)
    backprop(out, 0.5)
    expect.grads(t("s4.compose.rule"),
                 **{name: (leaf, 0.5 * w) for name, leaf, w in zip("abcde", leaves, want)})


# the edges: large |x|, slopes at 0 ------------------------------------------------------

def unary(engine, x0, make, what, rule, crash):
    """``make(Value(x0))`` and its rule run with out.grad = 2.5; an error ``crash`` names
    (a type or tuple) becomes a one-line failure saying why, any other one states the rule."""
    x = engine.Value(x0)
    try:
        out = make(x)
        one_step(out, 2.5)
    except NotImplementedError:
        raise
    except crash[0] as error:
        expect.fail(t("s4.raised", what=what, error=type(error).__name__, message=error, why=crash[1]))
    except Exception as error:  # noqa: BLE001 - reported to the learner with the rule
        expect.fail(t("s4.raised", what=what, error=type(error).__name__, message=error, why=rule))
    return x, out


@pytest.mark.parametrize("x0", [50.0, -50.0, 800.0, -800.0])
def test_tanh_is_flat_far_from_zero(engine, x0):
    rule = t("s4.tanh.flat")
    x, out = unary(engine, x0, lambda v: v.tanh(), t("s4.and_rule", expr=f"Value({x0:g}).tanh()"), rule,
                   (OverflowError, t("s4.tanh.overflow")))
    expect.equal(out.data, math.copysign(1.0, x0), f"Value({x0:g}).tanh().data", rule)
    grads(rule, x=(x, 0.0))


def test_exp_of_a_very_negative_number_is_zero_and_flat(engine):
    rule = t("s4.exp.underflow")
    x, out = unary(engine, -1000.0, lambda v: v.exp(), t("s4.and_rule", expr="Value(-1000).exp()"), rule, ((), ""))
    expect.equal(out.data, 0.0, "Value(-1000).exp().data", rule)
    grads(rule, x=(x, 0.0))


def test_exp_too_large_for_a_float_is_an_overflow_error(engine):
    expect.raises(OverflowError, lambda: engine.Value(1000.0).exp(),
                  t("s4.exp.overflow"))


@pytest.mark.parametrize("n, want_data, want_slope", [(2, 0.0, 0.0), (3, 0.0, 0.0), (1, 0.0, 1.0)],
                         ids=["square", "cube", "identity"])
def test_pow_slope_at_zero(engine, n, want_data, want_slope):
    rule = t("s4.pow.at_zero", n=n, m=n - 1, slope=f"{want_slope:g}")
    x, out = unary(engine, 0.0, lambda v: v ** n, t("s4.and_rule", expr=f"Value(0.0) ** {n}"), rule,
                   (ZeroDivisionError, t("s4.pow.divides", rule=rule)))
    expect.equal(out.data, want_data, f"(Value(0.0) ** {n}).data", rule)
    grads(rule, x=(x, want_slope * 2.5))


def test_pow_zero_is_constant(engine):
    rule = t("s4.pow.zero")
    x, out = unary(engine, 2.0, lambda v: v ** 0, t("s4.and_rule", expr="Value(2.0) ** 0"), rule, ((), ""))
    expect.equal(out.data, 1.0, "(Value(2.0) ** 0).data", rule)
    grads(rule, x=(x, 0.0))


@pytest.mark.properties
def test_random_graphs_match_central_differences(engine):
    """Random graphs of the operations so far (+, *, -, constants, tanh, exp, relu, **, /):
    every node's grad against central differences."""
    for_all(SMALL, graphs(ops_up_to(4), reuse=False),
            lambda steps: expect_gradients(expect, engine, steps, "rules"))
