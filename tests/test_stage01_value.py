"""Stage 1: the Value skeleton - what a node stores before any arithmetic.

The contract, clause by clause:

1. Value(data) keeps data as a float (Value(3).data is 3.0, a float).
2. grad starts at the float 0.0.
3. _backward of a new Value is a no-op returning None: it changes nothing.
4. _prev is the set of the children it was given (a reused child once);
   _op is the label it was given, '' by default.
5. repr(v) is 'Value(data=..., grad=...)'.
6. A non-number (a str, None, a list) is a TypeError that names its type."""
import pytest

from expect import Expect

expect = Expect(stage=1)


def test_data_is_stored_as_a_float(engine):
    v = engine.Value(3)
    expect.equal(v.data, 3.0, "Value(3).data", "data is kept as a float")
    expect.true(type(v.data) is float,
                f"Value(3).data is a {type(v.data).__name__}, expected float: store float(data). The article's "
                f"first listing keeps data as it is given (self.data = data); this kata stores a float, so "
                f"Value(3) and Value(3.0) are the same node: one repr (data=3.0), one type for data and grad, "
                f"and no int arithmetic anywhere in the graph")


def test_grad_starts_at_zero(engine):
    v = engine.Value(-2.5)
    expect.equal(v.grad, 0.0, "Value(-2.5).grad", "nothing has flowed back yet, so grad starts at 0.0")
    expect.true(type(v.grad) is float, f"grad is a {type(v.grad).__name__}, expected the float 0.0")


def test_backward_of_a_new_value_does_nothing(engine):
    v = engine.Value(4.0)
    v.grad = 1.5
    result = v._backward()
    expect.true(result is None, f"_backward() returned {result!r}: a leaf's rule is a no-op returning None")
    expect.equal(v.grad, 1.5, "grad after a leaf's _backward()", "a leaf has no parents, so its rule changes nothing")
    expect.equal(v.data, 4.0, "data after a leaf's _backward()", "a leaf has no parents, so its rule changes nothing")


def test_prev_is_the_set_of_children(engine):
    a, b = engine.Value(1.0), engine.Value(2.0)
    expect.equal(engine.Value(5.0)._prev, set(), "Value(5.0)._prev", "a Value made from nothing has no parents")
    made = engine.Value(3.0, (a, b))
    expect.true(isinstance(made._prev, set),
                f"_prev is a {type(made._prev).__name__}, expected a set: _prev = set(_children)")
    expect.equal(made._prev, {a, b}, "Value(3.0, (a, b))._prev", "_prev holds the Values it was made from")
    twice = engine.Value(1.0, (a, a))
    expect.equal(twice._prev, {a}, "Value(1.0, (a, a))._prev", "a set keeps a reused parent once")


def test_op_label_is_stored(engine):
    expect.equal(engine.Value(1.0)._op, "", "Value(1.0)._op", "the default label is ''")
    a = engine.Value(1.0)
    expect.equal(engine.Value(2.0, (a,), "tanh")._op, "tanh", "Value(2.0, (a,), 'tanh')._op",
                 "_op keeps the label it was given")


def test_repr_shows_data_and_grad(engine):
    v = engine.Value(2)
    v.grad = -0.5
    expect.equal(repr(v), "Value(data=2.0, grad=-0.5)", "repr(v)",
                 "__repr__ returns 'Value(data=…, grad=…)'")


@pytest.mark.parametrize("bad", ["3", None, [1]], ids=["str", "None", "list"])
def test_a_non_number_is_a_type_error_naming_its_type(engine, bad):
    error = expect.raises(TypeError, lambda: engine.Value(bad),
                          f"Value({bad!r}) must be refused, not stored")
    name = type(bad).__name__
    expect.true(name in str(error),
                f"the TypeError says {str(error)!r}, which does not name the type {name!r}")
