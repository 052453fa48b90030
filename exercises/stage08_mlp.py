"""Stage 8 - a network that learns.

A Neuron is a weighted sum through a ReLU, a Layer is a list of Neurons,
an MLP is a list of Layers: all just Values wired together. Gradient
descent on their parameters makes the loss fall.
You write: Neuron, Layer, MLP and train.

Run the tests:  pytest tests/test_stage08_*.py   (or: kata check 8)
Stuck?         kata hint 8
"""
import math
# ---- stage 8 starts here: its first new line (kata diff 8 --previous shows all it adds) ----
import random


def _leaf_backward():
    """A leaf was made from nothing, so it has no one to pass a gradient to."""


_RELEASED = (
    "backward() was called through a graph a second time, but its gradient "
    "rules were released after the first backward(). If you really need two "
    "passes, call backward(retain_graph=True) the first time (and zero_grad() "
    "in between, or the gradients add up)."
)


def _spent():
    """Stands in for the gradient rules of a graph that backward() has released."""
    raise RuntimeError(_RELEASED)


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
            self.grad += out.grad    # d(a+b)/da = 1
            other.grad += out.grad   # d(a+b)/db = 1
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
            self.grad += other.data * out.grad   # d(ab)/da = b
            other.grad += self.data * out.grad   # d(ab)/db = a
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
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t * t) * out.grad   # the slope, read off the output t
        out._backward = _backward
        return out

    def exp(self):
        """A new node e**self, label 'exp'."""
        out = Value(math.exp(self.data), (self,), 'exp')

        def _backward():
            self.grad += out.data * out.grad   # e^x is its own slope
        out._backward = _backward
        return out

    def relu(self):
        """A new node max(self, 0), label 'ReLU'; its slope at exactly 0 is 0, as in PyTorch."""
        out = Value(max(self.data, 0.0), (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad   # slope 1 above 0; 0 at and below 0, as PyTorch
        out._backward = _backward
        return out

    def __pow__(self, exponent):  # self ** exponent, for a plain-number exponent
        """A new node self ** exponent, label f'**{exponent}'. The exponent must be an
        int or float: a Value exponent is a TypeError that says so."""
        if not isinstance(exponent, (int, float)):
            raise TypeError(
                f"Value ** exponent: the exponent must be an int or float, not {exponent!r} "
                f"(no gradient flows into an exponent here)"
            )
        out = Value(self.data ** exponent, (self,), f'**{exponent}')

        def _backward():
            self.grad += exponent * self.data ** (exponent - 1) * out.grad
        out._backward = _backward
        return out

    def __truediv__(self, other):  # self / other
        return self * other ** -1

    def __rtruediv__(self, other):  # other / self
        return other * self ** -1

    def topological_order(self):
        """Every node self depends on, each once, inputs before outputs.

        An explicit stack instead of recursion: a chain of 100,000 ops would
        overflow Python's call stack long before it overflowed this list."""
        order, visited = [], set()
        stack = [(self, False)]
        while stack:
            node, inputs_done = stack.pop()
            if inputs_done:
                order.append(node)  # every input of node is already in order
            elif node not in visited:
                visited.add(node)
                stack.append((node, True))  # come back once its inputs are placed
                for child in node._prev:
                    if child not in visited:  # one visited before is already in order
                        stack.append((child, False))
        return order

    def backward(self, retain_graph=False):
        """Fill in .grad of every node self depends on: d(self)/d(node).

        Leaf gradients add up across calls (that is what zero_grad() is for);
        interior ones are scratch space for one pass. Afterwards the graph is
        released, as in PyTorch, unless retain_graph=True."""
        order = self.topological_order()
        for node in order:
            if node._backward is _spent:
                _spent()  # refuse before a single gradient changes
        for node in order:
            if node._prev:
                node.grad = 0.0  # interior grads start fresh, so leaves get exactly one more copy
        self.grad += 1.0  # d(self)/d(self); a leaf root adds, like every leaf
        for node in reversed(order):
            node._backward()
            if node._prev and not retain_graph:
                node._backward = _spent  # used once: drop the closure and what it holds


def _lift(x):
    """Let a plain number join the graph as a constant leaf.

    Anything else gives NotImplemented, so Python can ask the other operand
    and, failing that, raise its own TypeError ("unsupported operand ...")."""
    if isinstance(x, Value):
        return x
    if isinstance(x, (float, int)):
        return Value(x)
    return NotImplemented


class Module:
    """Anything with trainable Values: a neuron, a layer, a whole network."""

    def parameters(self):
        """Every Value that training should adjust (none, in the base class)."""
        return []

    def zero_grad(self):
        """Forget the last step: backward() adds into .grad, it never resets it."""
        for p in self.parameters():
            p.grad = 0.0


class Neuron(Module):
    """relu(sum(w_i * x_i) + b), or without the ReLU when nonlin=False.

    Keeps its weights in self.w (nin Values drawn from rng.uniform(-1, 1)),
    its bias in self.b (Value(0.0)) and the flag in self.nonlin."""

    def __init__(self, nin, nonlin=True, rng=random):
        raise NotImplementedError("stage 8: write Neuron.__init__ (kata hint 8)")

    def __call__(self, x):
        """The neuron's output for inputs x (numbers or Values, exactly len(self.w) of them)."""
        raise NotImplementedError("stage 8: write Neuron.__call__ (kata hint 8)")

    def parameters(self):
        raise NotImplementedError("stage 8: write Neuron.parameters (kata hint 8)")

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    """nout neurons, each looking at the same nin inputs, kept in self.neurons."""

    def __init__(self, nin, nout, **kwargs):
        raise NotImplementedError("stage 8: write Layer.__init__ (kata hint 8)")

    def __call__(self, x):
        """Every neuron's output for inputs x: always a list, even of one."""
        raise NotImplementedError("stage 8: write Layer.__call__ (kata hint 8)")

    def parameters(self):
        raise NotImplementedError("stage 8: write Layer.parameters (kata hint 8)")

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """Layers in a row; every one a ReLU layer except the last, which is linear.

    MLP(3, [4, 4, 1]) maps 3 inputs through two hidden layers of 4 to one
    output; the layers are kept in self.layers. One random.Random(seed) draws
    every weight, so the same seed always gives the same starting weights."""

    def __init__(self, nin, nouts, seed=None):
        raise NotImplementedError("stage 8: write MLP.__init__ (kata hint 8)")

    def __call__(self, x):
        """x through every layer in turn: one Value if the last layer has one neuron, else a list."""
        raise NotImplementedError("stage 8: write MLP.__call__ (kata hint 8)")

    def parameters(self):
        raise NotImplementedError("stage 8: write MLP.parameters (kata hint 8)")

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def train(model, xs, ys, steps, lr):
    """Gradient descent on the mean squared error; returns every step's loss.

    Each step: forward, zero_grad, backward, then nudge every parameter
    against its gradient."""
    raise NotImplementedError("stage 8: write train (kata hint 8)")
