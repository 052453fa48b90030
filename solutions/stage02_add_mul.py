"""Stage 2 - add and mul.

Operator overloading builds the graph as a side effect of ordinary
arithmetic. Each op makes a new node and a closure, _backward, that hands
(local derivative) x out.grad to each parent.
You write: Value.__add__ and Value.__mul__.

Run the tests:  pytest tests/test_stage02_*.py   (or: kata check 2)
Stuck?         kata hint 2
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

    # ---- stage 2 starts here: its first new line (kata diff 2 --previous shows all it adds) ----
    def __add__(self, other):  # self + other
        """A new node: data the sum, parents {self, other}, label '+', and a
        _backward closure that passes out.grad on to both parents."""
        # BEGIN SOLUTION
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad = out.grad    # d(a+b)/da = 1
            other.grad = out.grad   # d(a+b)/db = 1
        out._backward = _backward
        return out
        # END SOLUTION

    def __mul__(self, other):  # self * other
        """A new node: data the product, parents {self, other}, label '*', and a
        _backward closure that passes out.grad on to both parents."""
        # BEGIN SOLUTION
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad = other.data * out.grad   # d(ab)/da = b
            other.grad = self.data * out.grad   # d(ab)/db = a
        out._backward = _backward
        return out
        # END SOLUTION
