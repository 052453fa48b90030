"""Stage 3 - constants and reflected ops.

`v + 2`, `3 * v`, `-v`, `v - w`, `1 - v`: plain numbers join the graph as
constant leaves, and subtraction is addition of a negation.
You write: _lift, Value.__neg__, __radd__, __rmul__, __sub__, __rsub__.

Run the tests:  pytest tests/test_stage03_*.py   (or: kata check 3)
Stuck?         kata hint 3
"""


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
        # ---- stage 3 starts here: its first new line (kata diff 3 --previous shows all it adds) ----
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
        raise NotImplementedError("stage 3: write Value.__neg__ (kata hint 3)")

    def __radd__(self, other):  # other + self, when other is a plain number
        raise NotImplementedError("stage 3: write Value.__radd__ (kata hint 3)")

    def __rmul__(self, other):  # other * self
        raise NotImplementedError("stage 3: write Value.__rmul__ (kata hint 3)")

    def __sub__(self, other):  # self - other
        raise NotImplementedError("stage 3: write Value.__sub__ (kata hint 3)")

    def __rsub__(self, other):  # other - self
        raise NotImplementedError("stage 3: write Value.__rsub__ (kata hint 3)")


def _lift(x):
    """Let a plain number join the graph as a constant leaf.

    Anything else gives NotImplemented, so Python can ask the other operand
    and, failing that, raise its own TypeError ("unsupported operand ...")."""
    if isinstance(x, Value):
        return x
    raise NotImplementedError("stage 3: write _lift (kata hint 3)")
