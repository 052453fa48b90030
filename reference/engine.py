## The reference engine, written once.  `kata build` cuts the eight modules
## solutions/stageNN_*.py (the reference the tests import) and exercises/ (the
## learner's stubs) out of this file, as Crafting Interpreters cuts its chapters
## out of one source.  Edit here, run `kata build`, commit all three.
##
## Markers (whole-line comments; everything else is the code as it reads):
##   ## ...               a note for maintainers: in no generated module.
##   # >> stage N         the lines down to the matching `# <<` appear in stage N
##                        and every later stage.
##   # >> stages N-M      ...appear in stages N to M only: stage M+1 replaces them
##                        (stage 7 replaces stage 5's backward).
##   # >> stage N only    ...appear in stage N alone (each module's docstring).
##   # <<                 closes the innermost range.  Ranges nest.
##   # BEGIN SOLUTION / # END SOLUTION
##                        what the learner writes, in the stage where the
##                        enclosing range starts (stage 1 outside every range).
##                        In that stage's solutions/ module the markers stay (the
##                        nbgrader convention every other tool reads); the stub
##                        is `raise NotImplementedError("stage N: write ...")`,
##                        or, for a second region in the same function,
##                        `pass  # stage N: part 2 ...`, so a stub never raises
##                        twice with dead code in between.
##   CODE  # comment  # before N: OLD
##                        in stages before N the line reads OLD (the comment
##                        kept); stage N ships OLD as its naive stub and CODE as
##                        its reference (solutions/ carries it as
##                        `CODE  # STUB: OLD`).  Stage 6 is the discovery of +=:
##                        stages 2-5 assign, as a learner first writes it.
##
## Each generated module gets one banner line where its stage's first new line is.

# >> stage 1 only
"""Stage 1 - the Value skeleton.

A Value wraps one number and remembers three things: its gradient, the
Values it was made from, and (later) how to pass a gradient back to them.
You write: Value.__init__ and Value.__repr__.

Run the tests:  pytest tests/test_stage01_*.py   (or: kata check 1)
Stuck?         kata hint 1
"""
# <<
# >> stage 2 only
"""Stage 2 - add and mul.

Operator overloading builds the graph as a side effect of ordinary
arithmetic. Each op makes a new node and a closure, _backward, that hands
(local derivative) x out.grad to each parent.
You write: Value.__add__ and Value.__mul__.

Run the tests:  pytest tests/test_stage02_*.py   (or: kata check 2)
Stuck?         kata hint 2
"""
# <<
# >> stage 3 only
"""Stage 3 - constants and reflected ops.

`v + 2`, `3 * v`, `-v`, `v - w`, `1 - v`: plain numbers join the graph as
constant leaves, and subtraction is addition of a negation.
You write: _lift, Value.__neg__, __radd__, __rmul__, __sub__, __rsub__.

Run the tests:  pytest tests/test_stage03_*.py   (or: kata check 3)
Stuck?         kata hint 3
"""
# <<
# >> stage 4 only
"""Stage 4 - tanh, and the same recipe for every op.

tanh's slope is 1 - t*t where t is its *output*: the closure remembers t,
so the backward pass needs no recomputation. exp, relu, ** and / follow
the same three steps: compute the value, make `out`, attach a _backward.
You write: Value.tanh, exp, relu, __pow__, __truediv__, __rtruediv__.

Run the tests:  pytest tests/test_stage04_*.py   (or: kata check 4)
Stuck?         kata hint 4
"""
# <<
# >> stage 5 only
"""Stage 5 - backward in topological order.

A node may pass its gradient on only once it has received all of it, so
backward() visits nodes outputs-first: the reverse of a topological order.
The order is built without recursion, so a 100,000-op chain works.
You write: Value.topological_order and Value.backward.

Run the tests:  pytest tests/test_stage05_*.py   (or: kata check 5)
Stuck?         kata hint 5
"""
# <<
# >> stage 6 only
"""Stage 6 - accumulate with +=, never assign.

This module arrives as a first attempt would write it: every gradient rule
*assigns* (=). Run the tests: a node used twice (a*a, a+a, a diamond, one
leaf in two losses) gets the gradient of only one path.
You fix: every gradient rule, so that it adds (+=).

Run the tests:  pytest tests/test_stage06_*.py   (or: kata check 6)
Stuck?         kata hint 6
"""
# <<
# >> stage 7 only
"""Stage 7 - zero_grad, and a graph that can be walked back only once.

Gradients add up across backward() calls (stage 6), so training must zero
them every step. And like PyTorch, backward() releases the graph it used:
a second pass raises unless the first asked for retain_graph=True.
You write: Module.parameters, Module.zero_grad, and the new parts of Value.backward.

Run the tests:  pytest tests/test_stage07_*.py   (or: kata check 7)
Stuck?         kata hint 7
"""
# <<
# >> stage 8 only
"""Stage 8 - a network that learns.

A Neuron is a weighted sum through a ReLU, a Layer is a list of Neurons,
an MLP is a list of Layers: all just Values wired together. Gradient
descent on their parameters makes the loss fall.
You write: Neuron, Layer, MLP and train.

Run the tests:  pytest tests/test_stage08_*.py   (or: kata check 8)
Stuck?         kata hint 8
"""
# <<
# >> stage 4
import math
# <<
# >> stage 8
import random
# <<


def _leaf_backward():
    """A leaf was made from nothing, so it has no one to pass a gradient to."""
# >> stage 7


_RELEASED = (
    "backward() was called through a graph a second time, but its gradient "
    "rules were released after the first backward(). If you really need two "
    "passes, call backward(retain_graph=True) the first time (and zero_grad() "
    "in between, or the gradients add up)."
)


def _spent():
    """Stands in for the gradient rules of a graph that backward() has released."""
    raise RuntimeError(_RELEASED)
# <<


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
    # >> stage 2

    def __add__(self, other):  # self + other
        """A new node: data the sum, parents {self, other}, label '+', and a
        _backward closure that passes out.grad on to both parents."""
        # >> stage 3
        other = _lift(other)
        if other is NotImplemented:
            return NotImplemented
        # <<
        # BEGIN SOLUTION
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad    # d(a+b)/da = 1  # before 6: self.grad = out.grad
            other.grad += out.grad   # d(a+b)/db = 1  # before 6: other.grad = out.grad
        out._backward = _backward
        return out
        # END SOLUTION

    def __mul__(self, other):  # self * other
        """A new node: data the product, parents {self, other}, label '*', and a
        _backward closure that passes out.grad on to both parents."""
        # >> stage 3
        other = _lift(other)
        if other is NotImplemented:
            return NotImplemented
        # <<
        # BEGIN SOLUTION
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad   # d(ab)/da = b  # before 6: self.grad = other.data * out.grad
            other.grad += self.data * out.grad   # d(ab)/db = a  # before 6: other.grad = self.data * out.grad
        out._backward = _backward
        return out
        # END SOLUTION
    # <<
    # >> stage 3

    def __neg__(self):  # -self
        # BEGIN SOLUTION
        return -1 * self
        # END SOLUTION

    def __radd__(self, other):  # other + self, when other is a plain number
        # BEGIN SOLUTION
        return self + other
        # END SOLUTION

    def __rmul__(self, other):  # other * self
        # BEGIN SOLUTION
        return self * other
        # END SOLUTION

    def __sub__(self, other):  # self - other
        # BEGIN SOLUTION
        return self + (-other)
        # END SOLUTION

    def __rsub__(self, other):  # other - self
        # BEGIN SOLUTION
        return other + (-self)
        # END SOLUTION
    # <<
    # >> stage 4

    def tanh(self):
        """A new node tanh(self), label 'tanh'."""
        # BEGIN SOLUTION
        t = math.tanh(self.data)
        out = Value(t, (self,), 'tanh')

        def _backward():
            self.grad += (1 - t * t) * out.grad   # the slope, read off the output t  # before 6: self.grad = (1 - t * t) * out.grad
        out._backward = _backward
        return out
        # END SOLUTION

    def exp(self):
        """A new node e**self, label 'exp'."""
        # BEGIN SOLUTION
        out = Value(math.exp(self.data), (self,), 'exp')

        def _backward():
            self.grad += out.data * out.grad   # e^x is its own slope  # before 6: self.grad = out.data * out.grad
        out._backward = _backward
        return out
        # END SOLUTION

    def relu(self):
        """A new node max(self, 0), label 'ReLU'; its slope at exactly 0 is 0, as in PyTorch."""
        # BEGIN SOLUTION
        out = Value(max(self.data, 0.0), (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad   # slope 1 above 0; 0 at and below 0, as PyTorch  # before 6: self.grad = (out.data > 0) * out.grad
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
            self.grad += exponent * self.data ** (exponent - 1) * out.grad  # before 6: self.grad = exponent * self.data ** (exponent - 1) * out.grad
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
    # <<
    # >> stage 5

    def topological_order(self):
        """Every node self depends on, each once, inputs before outputs.

        An explicit stack instead of recursion: a chain of 100,000 ops would
        overflow Python's call stack long before it overflowed this list."""
        # BEGIN SOLUTION
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
        # END SOLUTION
    # <<
    # >> stages 5-6

    def backward(self):
        """Fill in .grad of every node self depends on: d(self)/d(node)."""
        # BEGIN SOLUTION
        self.grad = 1.0  # d(self)/d(self)
        for node in reversed(self.topological_order()):
            node._backward()  # outputs first: a node's grad is complete before it is passed on
        # END SOLUTION
    # <<
    # >> stage 7

    def backward(self, retain_graph=False):
        """Fill in .grad of every node self depends on: d(self)/d(node).

        Leaf gradients add up across calls (that is what zero_grad() is for);
        interior ones are scratch space for one pass. Afterwards the graph is
        released, as in PyTorch, unless retain_graph=True."""
        order = self.topological_order()
        # BEGIN SOLUTION
        for node in order:
            if node._backward is _spent:
                _spent()  # refuse before a single gradient changes
        for node in order:
            if node._prev:
                node.grad = 0.0  # interior grads start fresh, so leaves get exactly one more copy
        # END SOLUTION
        self.grad += 1.0  # d(self)/d(self); a leaf root adds, like every leaf
        for node in reversed(order):
            node._backward()
            # BEGIN SOLUTION
            if node._prev and not retain_graph:
                node._backward = _spent  # used once: drop the closure and what it holds
            # END SOLUTION
    # <<
# >> stage 3


def _lift(x):
    """Let a plain number join the graph as a constant leaf.

    Anything else gives NotImplemented, so Python can ask the other operand
    and, failing that, raise its own TypeError ("unsupported operand ...")."""
    if isinstance(x, Value):
        return x
    # BEGIN SOLUTION
    if isinstance(x, (float, int)):
        return Value(x)
    return NotImplemented
    # END SOLUTION
# <<
# >> stage 7


class Module:
    """Anything with trainable Values: a neuron, a layer, a whole network."""

    def parameters(self):
        """Every Value that training should adjust (none, in the base class)."""
        # BEGIN SOLUTION
        return []
        # END SOLUTION

    def zero_grad(self):
        """Forget the last step: backward() adds into .grad, it never resets it."""
        # BEGIN SOLUTION
        for p in self.parameters():
            p.grad = 0.0
        # END SOLUTION
# <<
# >> stage 8


class Neuron(Module):
    """relu(sum(w_i * x_i) + b), or without the ReLU when nonlin=False.

    Keeps its weights in self.w (nin Values drawn from rng.uniform(-1, 1)),
    its bias in self.b (Value(0.0)) and the flag in self.nonlin."""

    def __init__(self, nin, nonlin=True, rng=random):
        # BEGIN SOLUTION
        self.w = [Value(rng.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0.0)
        self.nonlin = nonlin
        # END SOLUTION

    def __call__(self, x):
        """The neuron's output for inputs x (numbers or Values, exactly len(self.w) of them)."""
        # BEGIN SOLUTION
        act = sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)
        return act.relu() if self.nonlin else act
        # END SOLUTION

    def parameters(self):
        # BEGIN SOLUTION
        return self.w + [self.b]
        # END SOLUTION

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    """nout neurons, each looking at the same nin inputs, kept in self.neurons."""

    def __init__(self, nin, nout, **kwargs):
        # BEGIN SOLUTION
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]
        # END SOLUTION

    def __call__(self, x):
        """Every neuron's output for inputs x: always a list, even of one."""
        # BEGIN SOLUTION
        return [n(x) for n in self.neurons]  # always a list, even of one
        # END SOLUTION

    def parameters(self):
        # BEGIN SOLUTION
        return [p for n in self.neurons for p in n.parameters()]
        # END SOLUTION

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):
    """Layers in a row; every one a ReLU layer except the last, which is linear.

    MLP(3, [4, 4, 1]) maps 3 inputs through two hidden layers of 4 to one
    output; the layers are kept in self.layers. One random.Random(seed) draws
    every weight, so the same seed always gives the same starting weights."""

    def __init__(self, nin, nouts, seed=None):
        # BEGIN SOLUTION
        rng = random.Random(seed)
        sizes = [nin] + list(nouts)
        self.layers = [Layer(sizes[i], sizes[i + 1], nonlin=i < len(nouts) - 1, rng=rng)
                       for i in range(len(nouts))]
        # END SOLUTION

    def __call__(self, x):
        """x through every layer in turn: one Value if the last layer has one neuron, else a list."""
        # BEGIN SOLUTION
        for layer in self.layers:
            x = layer(x)
        return x[0] if len(x) == 1 else x
        # END SOLUTION

    def parameters(self):
        # BEGIN SOLUTION
        return [p for layer in self.layers for p in layer.parameters()]
        # END SOLUTION

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def train(model, xs, ys, steps, lr):
    """Gradient descent on the mean squared error; returns every step's loss.

    Each step: forward, zero_grad, backward, then nudge every parameter
    against its gradient."""
    # BEGIN SOLUTION
    losses = []
    for _ in range(steps):
        errors = [(model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)]
        loss = sum(errors) / len(errors)  # sum starts at 0, and 0 + Value is Value.__radd__
        model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        losses.append(loss.data)
    return losses
    # END SOLUTION
# <<
