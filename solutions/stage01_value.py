"""Stage 1 - the Value skeleton.

A Value wraps one number and remembers three things: its gradient, the
Values it was made from, and (later) how to pass a gradient back to them.
You write: Value.__init__ and Value.__repr__.

Run the tests:  pytest tests/test_stage01_*.py   (or: kata check 1)
Stuck?         kata hint 1
"""


# ---- stage 1 starts here: its first new line (kata diff 1 --previous shows all it adds) ----
def _leaf_backward():
    """A leaf was made from nothing, so it has no one to pass a gradient to."""


class Value:
    """A scalar that remembers how it was made, so a gradient can flow back."""

    __slots__ = ("data", "grad", "_backward", "_prev", "_op")

    def __init__(self, data, _children=(), _op=''):
        """A node: data (an int or float, kept as a float; anything else is a
        TypeError naming its type), grad 0.0, the do-nothing _backward, the
        parents as the set _prev, and the label _op."""
        # BEGIN SOLUTION
        if not isinstance(data, (float, int)):  # float first: what every op passes
            raise TypeError(f"Value() takes an int or float, not {type(data).__name__}: {data!r}")
        self.data = float(data)
        self.grad = 0.0                  # d(root)/d(self): nothing has flowed back yet
        self._backward = _leaf_backward  # how to pass self.grad on to the parents
        self._prev = set(_children)      # the Values this one was made from
        self._op = _op                   # a label, for printing and drawing only
        # END SOLUTION

    def __repr__(self):
        """Value(data=2.0, grad=0.0)"""
        # BEGIN SOLUTION
        return f"Value(data={self.data}, grad={self.grad})"
        # END SOLUTION
