## The reference engine, written once.  `kata build` cuts the eight modules
## solutions/stageNN_*.py (the reference the tests import) and exercises/ (the
## learner's stubs) out of this file, as Crafting Interpreters cuts its chapters
## out of one source.  Edit here, run `kata build`, commit all three.
##
## Markers (whole-line comments; everything else is the code as it reads):
##   ## ...               a note for maintainers: in no generated module.
##                        The file ends with such notes: "Each stage's contract,
##                        broken clause by clause", each clause's smallest wrong
##                        implementations and the other right ways, a block per
##                        stage (tooltests/test_contracts.py makes each one).
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
##
## Each stage's contract, broken clause by clause
##
## A stage test module's docstring states the stage's contract as named clauses, `- [name]
## what holds`.  Below, a block per stage, in stage order: each clause's smallest wrong
## implementations, which tooltests/test_contracts.py makes one at a time in a scratch copy
## (the stage's tests must fail, printing the clause's words), and other right ways to write
## what the reference does (the stage must pass them: the tests judge effects, not calls).
## A note names mistakes of the catalogue, autograd_kata/maintainer/mistakes.py:
##     ## stage N contract, [clause]: id, id (catalogue mistakes)
## or is an edit of the stage's module solutions/stageNN_*.py, a line
##     ## stage N contract, [clause] id: what the wrong code does
##     ## stage N another right way, id: what the code does
## and then its own lines, each after `##` and three spaces: `says:` and the words the failing
## stage prints (a breaker only), `-` and each reference line it replaces (exactly as that
## module has them, whole lines, together found there once), `+` and each line it writes
## instead.  autograd_kata/maintainer/contracts.py reads them; `kata new-stage` appends a
## stage's block; a clause with no note, or a `-` line the module does not have, fails
## tooltests/test_contracts.py.
##
## stage 1 contract, [data-is-a-float]: data-kept-as-given (a catalogue mistake)
## stage 1 contract, [data-is-a-float] data-truncated: keeps only the whole part of the data, float(int(data))
##   says: a non-whole number is kept exactly
##   -        self.data = float(data)
##   +        self.data = float(int(data))
## stage 1 contract, [grad-starts-at-zero]: grad-starts-as-int (a catalogue mistake)
## stage 1 contract, [leaf-rule-is-a-no-op] leaf-rule-returns: the leaf's _backward returns 0.0
##   says: a leaf's rule is a no-op returning None
##   -    """A leaf was made from nothing, so it has no one to pass a gradient to."""
##   +    """A leaf was made from nothing, so it has no one to pass a gradient to."""
##   +    return 0.0
## stage 1 contract, [children-and-label]: prev-is-a-tuple (a catalogue mistake)
## stage 1 contract, [children-and-label] op-dropped: never stores the label
##   says: _op keeps the label it was given
##   -        self._op = _op                   # a label, for printing and drawing only
##   +        self._op = ''                   # a label, for printing and drawing only
## stage 1 contract, [repr] repr-data-only: repr shows only the data
##   says: __repr__ returns 'Value(data=..., grad=...)'
##   -        return f"Value(data={self.data}, grad={self.grad})"
##   +        return f"Value({self.data})"
## stage 1 contract, [non-number-refused]: no-type-check (a catalogue mistake)
## stage 1 contract, [non-number-refused] type-error-unnamed: raises TypeError without naming the type
##   says: which does not name the type
##   -            raise TypeError(f"Value() takes an int or float, not {type(data).__name__}: {data!r}")
##   +            raise TypeError("Value() takes an int or float")
##
## stage 2 contract, [new-node] add-subtracts: __add__ computes the difference
##   says: __add__ adds the two data
##   -        out = Value(self.data + other.data, (self, other), '+')
##   +        out = Value(self.data - other.data, (self, other), '+')
## stage 2 contract, [parents-and-label] add-unlabelled: __add__ leaves the label empty
##   says: label the node '+'
##   -        out = Value(self.data + other.data, (self, other), '+')
##   +        out = Value(self.data + other.data, (self, other))
## stage 2 contract, [rules-hand-shares]: add-forgets-upstream (a catalogue mistake)
## stage 2 contract, [rules-hand-shares]: mul-forgets-upstream (a catalogue mistake)
## stage 2 contract, [rules-hand-shares]: mul-swapped-partials (a catalogue mistake)
## stage 2 contract, [rules-hand-shares]: add-passes-the-data (a catalogue mistake)
## stage 2 contract, [operands-untouched] mul-adopts-the-operand: __mul__ records other as a parent of self too
##   says: operands stay leaves
##   -        out = Value(self.data * other.data, (self, other), '*')
##   +        self._prev.add(other)
##   +        out = Value(self.data * other.data, (self, other), '*')
##
## stage 3 contract, [lift]: lift-raises (a catalogue mistake)
## stage 3 contract, [constants-join] radd-swaps-to-sub: __radd__ subtracts
##   says: 2 + v: Python calls v.__radd__(2)
##   -        return self + other
##   +        return self - other
## stage 3 contract, [negation]: neg-detached (a catalogue mistake)
## stage 3 contract, [subtraction]: rsub-operands-swapped (a catalogue mistake)
## stage 3 contract, [subtraction]: sub-forgets-to-negate (a catalogue mistake)
## stage 3 contract, [composition]: neg-detached (a catalogue mistake)
## stage 3 contract, [unsupported-operands]: lift-raises (a catalogue mistake)
## stage 3 contract, [unsupported-operands] mul-raises-for-unsupported: __mul__ raises a TypeError itself, not NotImplemented
##   says: v * Other() raised TypeError
##   -        if other is NotImplemented:
##   -            return NotImplemented
##   -        out = Value(self.data * other.data, (self, other), '*')
##   +        if other is NotImplemented:
##   +            raise TypeError('numbers only')
##   +        out = Value(self.data * other.data, (self, other), '*')
##
## stage 4 contract, [new-nodes] tanh-unlabelled: labels tanh 't'
##   says: label the node 'tanh'
##   -        out = Value(t, (self,), 'tanh')
##   +        out = Value(t, (self,), 't')
## stage 4 contract, [slopes]: tanh-slope-from-input, exp-slope-from-input (catalogue mistakes)
## stage 4 contract, [slopes]: relu-slope-one-at-zero, pow-exponent-off-by-one (catalogue mistakes)
## stage 4 contract, [edges]: tanh-slope-via-cosh, tanh-via-exp (catalogue mistakes)
## stage 4 contract, [edges]: pow-slope-via-division, exp-overflow-to-inf (catalogue mistakes)
## stage 4 contract, [value-exponent-refused] pow-accepts-anything: never checks the exponent
##   says: which does not say the problem is the exponent
##   -        if not isinstance(exponent, (int, float)):
##   +        if False:
## stage 4 contract, [value-exponent-refused] pow-error-unnamed: raises a TypeError that never names the exponent's type
##   says: which does not say the problem is the exponent
##   -                f"Value ** exponent: the exponent must be an int or float, not {exponent!r} "
##   +                f"the exponent must be an int or float "
## stage 4 contract, [division]: rtruediv-operands-swapped, truediv-detached (catalogue mistakes)
## stage 4 contract, [composition]: tanh-slope-from-input (a catalogue mistake)
## stage 4 another right way, pow-refuses-in-japanese: raises the Value-exponent TypeError with a message in Japanese
##   -                f"Value ** exponent: the exponent must be an int or float, not {exponent!r} "
##   -                f"(no gradient flows into an exponent here)"
##   +                f"指数は int か float にしてください（{type(exponent).__name__} は使えません）"
##
## stage 5 contract, [order]: no-visited-set, outputs-before-inputs (catalogue mistakes)
## stage 5 contract, [order]: order-reversed-twice-over (a catalogue mistake)
## stage 5 contract, [no-recursion]: recursive-topological-sort (a catalogue mistake)
## stage 5 contract, [no-recursion]: recursion-limit-raised (a catalogue mistake)
## stage 5 contract, [every-rule-once]: root-not-seeded, no-reverse (catalogue mistakes)
## stage 5 contract, [lone-leaf] leaf-root-unseeded: seeds the root only when it has parents
##   says: dx/dx = 1
##   -        self.grad = 1.0  # d(self)/d(self)
##   +        if self._prev:
##   +            self.grad = 1.0
## stage 5 contract, [central-differences]: no-reverse (a catalogue mistake)
##
## Stage 6's [rules-add] is broken by every rule of autograd_kata/core/operations.py's table
## written with = instead of +=, its <op>-rule-assigns mistake: tooltests/test_contracts.py
## derives them from the table, so a new rule's needs no note here.
## stage 6 contract, [paths-sum]: mul-rule-assigns, add-rule-assigns (catalogue mistakes)
## stage 6 contract, [leaf-grads-kept]: backward-zeroes-every-grad (a catalogue mistake)
## stage 6 contract, [agrees-with-pytorch]: pow-rule-assigns (a catalogue mistake)
## stage 6 another right way, rules-add-longhand: writes the add rule as self.grad = self.grad + out.grad
##   -            self.grad += out.grad    # d(a+b)/da = 1  # STUB: self.grad = out.grad    # d(a+b)/da = 1
##   +            self.grad = self.grad + out.grad    # d(a+b)/da = 1  # STUB: self.grad = out.grad    # d(a+b)/da = 1
##
## stage 7 contract, [zero-grad]: zero-grad-skips-the-last, zero-grad-sets-int (catalogue mistakes)
## stage 7 contract, [zero-grad] zero-grad-zeroes-data: zero_grad() resets the data too
##   says: zero_grad() forgets gradients only
##   -        for p in self.parameters():
##   -            p.grad = 0.0
##   +        for p in self.parameters():
##   +            p.grad = 0.0
##   +            p.data = 0.0
## stage 7 contract, [grads-add-up]: leaf-root-seeded-with-equals (a catalogue mistake)
## stage 7 contract, [grads-add-up] backward-resets-leaves: backward() zeroes the leaves' grads too
##   says: backward() adds into leaf grads and never resets them
##   -            if node._prev:
##   -                node.grad = 0.0  # interior grads start fresh, so leaves get exactly one more copy
##   +            if True:
##   +                node.grad = 0.0  # interior grads start fresh, so leaves get exactly one more copy
## stage 7 contract, [graph-released]: second-backward-accepted (a catalogue mistake)
## stage 7 contract, [graph-released]: release-of-the-root-only (a catalogue mistake)
## stage 7 contract, [graph-released] retain-skips-the-check: skips the released-graph check when retain_graph=True
##   says: retain_graph=True asked for too late
##   -            if node._backward is _spent:
##   +            if not retain_graph and node._backward is _spent:
## stage 7 contract, [refuses-first]: refuses-too-late (a catalogue mistake)
## stage 7 contract, [refuses-first]: release-checked-on-the-root-only (a catalogue mistake)
## stage 7 contract, [retain-graph]: micrograd-one-to-three (a catalogue mistake)
## stage 7 contract, [retain-graph] retain-graph-ignored: releases the graph even with retain_graph=True
##   says: backward(retain_graph=True) keeps the graph
##   -            if node._prev and not retain_graph:
##   +            if node._prev:
## stage 7 contract, [fit-needs-zero-grad]: zero-grad-skips-the-last (a catalogue mistake)
## stage 7 another right way, zero-grad-by-index: zero_grad() walks the parameters by index
##   -        for p in self.parameters():
##   -            p.grad = 0.0
##   +        ps = self.parameters()
##   +        for i in range(len(ps)):
##   +            ps[i].grad = 0.0
##
## stage 8 contract, [neuron]: no-hidden-relu (a catalogue mistake)
## stage 8 contract, [neuron] bias-drawn-at-random: draws the bias at random too
##   says: the bias starts at 0.0
##   -        self.b = Value(0.0)
##   +        self.b = Value(rng.uniform(-1, 1))
## stage 8 contract, [layer]: one-output-unwrapped-per-layer (a catalogue mistake)
## stage 8 contract, [mlp]: last-layer-relu (a catalogue mistake)
## stage 8 contract, [mlp] parameters-without-bias: a neuron's parameters() leaves out the bias
##   says: one weight per input plus one bias
##   -        return self.w + [self.b]
##   +        return self.w
## stage 8 contract, [seed]: seed-ignored, seed-reseeds-the-global-random (catalogue mistakes)
## stage 8 contract, [seed]: seed-zero-taken-for-none (a catalogue mistake)
## stage 8 contract, [lengths-checked]: zip-truncates (a catalogue mistake)
## stage 8 contract, [lengths-checked] train-zip-truncates: train() zips inputs and targets without strict=True
##   says: 3 inputs but 2 targets
##   -        errors = [(model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)]
##   +        errors = [(model(x) - y) ** 2 for x, y in zip(xs, ys)]
## stage 8 contract, [train]: train-no-zero-grad, train-zeroes-after-the-step (catalogue mistakes)
## stage 8 contract, [train]: train-climbs-the-gradient (a catalogue mistake)
## stage 8 contract, [train]: train-keeps-the-loss-value, train-sums-the-loss (catalogue mistakes)
## stage 8 another right way, train-zeroes-by-hand: train() zeroes every parameter's grad itself instead of model.zero_grad()
##   -        model.zero_grad()
##   +        for p in model.parameters():
##   +            p.grad = 0.0
