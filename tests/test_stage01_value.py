"""Stage 1: the Value skeleton - what a node stores before any arithmetic.

The contract, clause by clause:

- [data-is-a-float] Value(data) keeps data as a float (Value(3).data is 3.0, a float), a
  non-whole number exactly as given (Value(-2.5).data is -2.5, not -2.0).
- [grad-starts-at-zero] grad starts at the float 0.0.
- [leaf-rule-is-a-no-op] _backward of a new Value is a no-op returning None: it changes nothing.
- [children-and-label] _prev is the set of the children it was given (a reused child once);
  _op is the label it was given, '' by default.
- [repr] repr(v) is 'Value(data=..., grad=...)'.
- [non-number-refused] A non-number (a str, None, a list) is a TypeError that names its type."""
import pytest

from autograd_kata.core.i18n import t
from expect import Expect

expect = Expect(stage=1)


def test_data_is_stored_as_a_float(engine):
    v = engine.Value(3)
    expect.equal(v.data, 3.0, "Value(3).data", t("s1.data.rule"))
    expect.true(type(v.data) is float,
                t("s1.data.type", type=type(v.data).__name__))


@pytest.mark.parametrize("number", [-2.5, 0.1, 2.75], ids=["minus_2_5", "0_1", "2_75"])
def test_a_non_whole_number_is_kept_as_given(engine, number):
    v = engine.Value(number)
    expect.equal(v.data, number, f"Value({number!r}).data", t("s1.data.non_whole"))


def test_grad_starts_at_zero(engine):
    v = engine.Value(-2.5)
    expect.equal(v.grad, 0.0, "Value(-2.5).grad", t("s1.grad.rule"))
    expect.true(type(v.grad) is float, t("s1.grad.type", type=type(v.grad).__name__))


def test_backward_of_a_new_value_does_nothing(engine):
    v = engine.Value(4.0)
    v.grad = 1.5
    result = v._backward()
    expect.true(result is None, t("s1.backward.returned", result=repr(result)))
    expect.equal(v.grad, 1.5, t("s1.after_leaf", attr="grad"), t("s1.backward.leaf"))
    expect.equal(v.data, 4.0, t("s1.after_leaf", attr="data"), t("s1.backward.leaf"))


def test_prev_is_the_set_of_children(engine):
    a, b = engine.Value(1.0), engine.Value(2.0)
    made = engine.Value(3.0, (a, b))
    for prev in (engine.Value(5.0)._prev, made._prev):  # the type first: an empty list is empty too
        expect.true(isinstance(prev, set), t("s1.prev.type", type=type(prev).__name__))
    expect.equal(engine.Value(5.0)._prev, set(), "Value(5.0)._prev", t("s1.prev.empty"))
    expect.equal(made._prev, {a, b}, "Value(3.0, (a, b))._prev", t("s1.prev.holds"))
    twice = engine.Value(1.0, (a, a))
    expect.equal(twice._prev, {a}, "Value(1.0, (a, a))._prev", t("s1.prev.reused"))


def test_op_label_is_stored(engine):
    expect.equal(engine.Value(1.0)._op, "", "Value(1.0)._op", t("s1.op.default"))
    a = engine.Value(1.0)
    expect.equal(engine.Value(2.0, (a,), "tanh")._op, "tanh", "Value(2.0, (a,), 'tanh')._op",
                 t("s1.op.kept"))


def test_repr_shows_data_and_grad(engine):
    v = engine.Value(2)
    v.grad = -0.5
    expect.equal(repr(v), "Value(data=2.0, grad=-0.5)", "repr(v)",
                 t("s1.repr.rule"))


@pytest.mark.parametrize("bad", ["3", None, [1]], ids=["str", "None", "list"])
def test_a_non_number_is_a_type_error_naming_its_type(engine, bad):
    error = expect.raises(TypeError, lambda: engine.Value(bad),
                          t("s1.type.refuse", bad=repr(bad)))
    name = type(bad).__name__
    expect.true(name in str(error),
                t("s1.type.name", said=repr(str(error)), name=repr(name)))
