"""Stage 4 - tanh, and the same recipe for every op.

tanh's slope is 1 - t*t where t is its *output*: the closure remembers t,
so the backward pass needs no recomputation. exp, relu, ** and / follow
the same three steps: compute the value, make `out`, attach a _backward.
You write: Value.tanh, exp, relu, __pow__, __truediv__, __rtruediv__.

Run the tests:  pytest tests/test_stage04_*.py   (or: kata check 4)
Stuck?         kata hint 4
"""
# ---- stage 4 starts here: its first new line (kata diff 4 --previous shows all it adds) ----
import math


def _leaf_backward():
    """A leaf was made from nothing, so it has no one to pass a gradient to."""


class Value:
    """A scalar that remembers how it was made, so a gradient can flow back."""

    __slots__ = ("data", "grad", "_backward", "_prev", "_op")

    def __init__(self, data, _children=(), _op=''):
        """A node: data (an int or float, kept as a float; anything else is a
        TypeError naming its type), grad 0.0, the do-nothing _backward, the
        parents as the set _prev, and the label _op."""
        if not isinstance(data, (float, int)):  # float first: what every op passes
            raise TypeError(f"Value() takes an int or float, not {type(data).__name__}: {data!r}")
        self.data = float(data)
        self.grad = 0.0                  # d(root)/d(self): nothing has flowed back yet
        self._backward = _leaf_backward  # how to pass self.grad on to the parents
        self._prev = set(_children)      # the Values this one was made from
        self._op = _op                   # a label, for printing and drawing only

    def __repr__(self):
        """Value(data=2.0, grad=0.0)"""
        return f"Value(data={self.data}, grad={self.grad})"

    def __add__(self, other):  # self + other
        """A new node: data the sum, parents {self, other}, label '+', and a
        _backward closure that passes out.grad on to both parents."""
        other = _lift(other)
        if other is NotImplemented:
            return NotImplemented
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = out.grad    # d(a+b)/da = 1
            other.grad = out.grad   # d(a+b)/db = 1
        out._backward = _backward
        return out

    def __mul__(self, other):  # self * other
        """A new node: data the product, parents {self, other}, label '*', and a
        _backward closure that passes out.grad on to both parents."""
        other = _lift(other)
        if other is NotImplemented:
            return NotImplemented
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad = other.data * out.grad   # d(ab)/da = b
            other.grad = self.data * out.grad   # d(ab)/db = a
        out._backward = _backward
        return out

    def __neg__(self):  # -self
        return -1 * self

    def __radd__(self, other):  # other + self, when other is a plain number
        return self + other

    def __rmul__(self, other):  # other * self
        return self * other

    def __sub__(self, other):  # self - other
        return self + (-other)

    def __rsub__(self, other):  # other - self
        return other + (-self)

    def tanh(self):
        """A new node tanh(self), label 'tanh'."""
        # BEGIN SOLUTION
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad = (1 - t * t) * out.grad   # the slope, read off the output t
        out._backward = _backward
        return out
        # END SOLUTION

    def exp(self):
        """A new node e**self, label 'exp'."""
        # BEGIN SOLUTION
        out = Value(math.exp(self.data), (self,), 'exp')

        def _backward():
            self.grad = out.data * out.grad   # e^x is its own slope
        out._backward = _backward
        return out
        # END SOLUTION

    def relu(self):
        """A new node max(self, 0), label 'ReLU'; its slope at exactly 0 is 0, as in PyTorch."""
        # BEGIN SOLUTION
        out = Value(max(self.data, 0.0), (self,), 'ReLU')

        def _backward():
            self.grad = (out.data > 0) * out.grad   # slope 1 above 0; 0 at and below 0, as PyTorch
        out._backward = _backward
        return out
        # END SOLUTION

    def __pow__(self, exponent):  # self ** exponent, for a plain-number exponent
        """A new node self ** exponent, label f'**{exponent}'. The exponent must be an
        int or float: a Value exponent is a TypeError that says so."""
        # BEGIN SOLUTION
        if not isinstance(exponent, (int, float)):
            raise TypeError(
                f"Value ** exponent: the exponent must be an int or float, not {exponent!r} "
                f"(no gradient flows into an exponent here)"
            )
        out = Value(self.data ** exponent, (self,), f'**{exponent}')

        def _backward():
            self.grad = exponent * self.data ** (exponent - 1) * out.grad
        out._backward = _backward
        return out
        # END SOLUTION

    def __truediv__(self, other):  # self / other
        # BEGIN SOLUTION
        return self * other ** -1
        # END SOLUTION

    def __rtruediv__(self, other):  # other / self
        # BEGIN SOLUTION
        return other * self ** -1
        # END SOLUTION


def _lift(x):
    """Let a plain number join the graph as a constant leaf.

    Anything else gives NotImplemented, so Python can ask the other operand
    and, failing that, raise its own TypeError ("unsupported operand ...")."""
    if isinstance(x, Value):
        return x
    if isinstance(x, (float, int)):
        return Value(x)
    return NotImplemented
