"""The classic-mistake catalogue's code: how to make each wrong turn a learner takes.

Each entry makes one classic mistake of the one table, ``core/mistakes.py``
(``named``: its id there, which gives its stage, the phrase its failure says and
its label): what the learner did, in their words (``says``), and how to do it in
the reference module of its stage (``old`` -> ``new``, exact text that must occur
exactly once, so the catalogue cannot rot when the reference changes).  The
table holds what a learner's package needs; this module, the reference's own
code, ships only with the sources (the wheel leaves ``maintainer/`` out).

``tooltests/test_mistakes.py`` applies every entry to a copy of the
reference, runs that stage's tests against it as a learner would (``--impl
exercises``), and checks that the stage fails and names the mistake;
``tooltests/test_mistake_table.py`` that every mistake of the table has one
here, and its label in every language.  To add one: a row in the table, its
label ``mistake.<id>`` in ``locales/*.po``, and a ``Mistake`` here; if
test_mistakes fails, the stage tests need a message (or an input) that tells
this mistake apart.
"""
from __future__ import annotations

from autograd_kata.core.operations import rules
from autograd_kata.maintainer.mistake import Mistake, rule_assigns

__all__ = ["MISTAKES", "Mistake"]


# stage 5's reference order (an explicit stack) and micrograd's recursive one: two mistakes swap one for the other
ITERATIVE_ORDER = (
    "        order, visited = [], set()\n"
    "        stack = [(self, False)]\n"
    "        while stack:\n"
    "            node, inputs_done = stack.pop()\n"
    "            if inputs_done:\n"
    "                order.append(node)  # every input of node is already in order\n"
    "            elif node not in visited:\n"
    "                visited.add(node)\n"
    "                stack.append((node, True))  # come back once its inputs are placed\n"
    "                for child in node._prev:\n"
    "                    if child not in visited:  # one visited before is already in order\n"
    "                        stack.append((child, False))\n"
    "        return order\n"
)
RECURSIVE_ORDER = (
    "        order, visited = [], set()\n"
    "\n"
    "        def visit(node):\n"
    "            if node not in visited:\n"
    "                visited.add(node)\n"
    "                for child in node._prev:\n"
    "                    visit(child)\n"
    "                order.append(node)\n"
    "        visit(self)\n"
    "        return order\n"
)


MISTAKES: tuple[Mistake, ...] = (
    # -- stage 1: the Value skeleton -------------------------------------------------
    Mistake("grad-starts-as-int", "grad-int", "starts grad at the int 0 instead of the float 0.0",
            "self.grad = 0.0 ", "self.grad = 0 "),
    Mistake("data-kept-as-given", "data-not-float", "keeps data as given (an int stays an int) instead of float(data)",
            "self.data = float(data)", "self.data = data"),
    Mistake("prev-is-a-tuple", "prev-not-set", "keeps the children as the tuple they came in, not a set",
            "self._prev = set(_children)", "self._prev = _children"),
    Mistake("no-type-check", "no-type-check", "accepts anything float() accepts, so Value('3') is stored",
            "        if not isinstance(data, (float, int)):  # float first: what every op passes\n"
            "            raise TypeError(f\"Value() takes an int or float, not {type(data).__name__}: {data!r}\")\n",
            ""),

    # -- stage 2: add and mul --------------------------------------------------------
    Mistake("add-forgets-upstream", "add-mul-upstream", "adds 1 to each parent instead of 1 * out.grad",
            "            self.grad = out.grad    # d(a+b)/da = 1\n"
            "            other.grad = out.grad   # d(a+b)/db = 1\n",
            "            self.grad = 1.0\n"
            "            other.grad = 1.0\n"),
    Mistake("mul-forgets-upstream", "add-mul-upstream",
            "hands each parent the other operand without multiplying by out.grad",
            "            self.grad = other.data * out.grad   # d(ab)/da = b\n"
            "            other.grad = self.data * out.grad   # d(ab)/db = a\n",
            "            self.grad = other.data\n"
            "            other.grad = self.data\n"),
    Mistake("mul-swapped-partials", "mul-swapped", "gives each factor its own value instead of the other one's",
            "            self.grad = other.data * out.grad   # d(ab)/da = b\n"
            "            other.grad = self.data * out.grad   # d(ab)/db = a\n",
            "            self.grad = self.data * out.grad\n"
            "            other.grad = other.data * out.grad\n"),
    Mistake("mul-rule-read-off-the-output", "mul-divides", "computes mul's share for a as out.data / a.data * out.grad",
            "            self.grad = other.data * out.grad   # d(ab)/da = b\n",
            "            self.grad = out.data / self.data * out.grad\n"),
    Mistake("add-passes-the-data", "add-data", "hands each parent out.data instead of out.grad",
            "            self.grad = out.grad    # d(a+b)/da = 1\n"
            "            other.grad = out.grad   # d(a+b)/db = 1\n",
            "            self.grad = out.data\n"
            "            other.grad = out.data\n"),

    # -- stage 3: constants and reflected ops ----------------------------------------
    Mistake("neg-detached", "detached-3", "makes -v a fresh Value(-v.data), cut off from v",
            "return -1 * self", "return Value(-self.data)"),
    Mistake("rsub-operands-swapped", "rsub-swapped", "computes self - other in __rsub__, so 1 - v gives v - 1",
            "return other + (-self)", "return self + (-other)"),
    Mistake("sub-forgets-to-negate", "sub-no-negate", "adds other in __sub__ instead of its negation",
            "return self + (-other)", "return self + other"),
    Mistake("radd-number-on-the-left", "reflected-loop", "writes __radd__ as other + self, so it calls itself",
            "return self + other\n", "return other + self\n"),
    Mistake("lift-raises", "lift-raises", "raises its own TypeError for a string instead of returning NotImplemented",
            "        return Value(x)\n    return NotImplemented\n",
            "        return Value(x)\n    raise TypeError(f\"cannot use {x!r} in a Value expression\")\n"),

    # -- stage 4: tanh and the same recipe -------------------------------------------
    Mistake("tanh-slope-from-input", "tanh-input", "computes tanh's slope from the input, 1 - x*x",
            "self.grad = (1 - t * t) * out.grad", "self.grad = (1 - self.data * self.data) * out.grad"),
    Mistake("tanh-one-minus-t", "tanh-one-minus-t", "writes tanh's slope as 1 - t instead of 1 - t*t",
            "self.grad = (1 - t * t) * out.grad", "self.grad = (1 - t) * out.grad"),
    Mistake("tanh-forgets-upstream", "upstream-4", "passes tanh's slope on without multiplying by out.grad",
            "self.grad = (1 - t * t) * out.grad", "self.grad = (1 - t * t)"),
    Mistake("exp-slope-from-input", "exp-input", "uses the input x as exp's slope instead of its output e^x",
            "self.grad = out.data * out.grad   # e^x is its own slope",
            "self.grad = self.data * out.grad"),
    Mistake("relu-slope-one-at-zero", "relu-slope", "lets the gradient through at exactly 0 (>= 0 instead of > 0)",
            "self.grad = (out.data > 0) * out.grad", "self.grad = (self.data >= 0) * out.grad"),
    Mistake("relu-slope-always-one", "relu-slope", "passes out.grad straight through ReLU, negative inputs too",
            "self.grad = (out.data > 0) * out.grad", "self.grad = out.grad"),
    Mistake("pow-exponent-off-by-one", "pow-off-by-one", "writes the power rule as n * x**n instead of n * x**(n-1)",
            "self.grad = exponent * self.data ** (exponent - 1) * out.grad",
            "self.grad = exponent * self.data ** exponent * out.grad"),
    Mistake("tanh-slope-via-cosh", "tanh-overflow", "writes tanh's slope as 1/cosh(x)**2, which overflows far from 0",
            "self.grad = (1 - t * t) * out.grad", "self.grad = out.grad / math.cosh(self.data) ** 2"),
    Mistake("tanh-via-exp", "tanh-overflow",
            "computes tanh from exp, (e^2x - 1) / (e^2x + 1), which overflows far from 0",
            "t = math.tanh(self.data)", "t = (math.exp(2 * self.data) - 1) / (math.exp(2 * self.data) + 1)"),
    Mistake("pow-slope-via-division", "pow-divides",
            "computes the power slope as n * out.data / x, dividing by zero at 0",
            "self.grad = exponent * self.data ** (exponent - 1) * out.grad",
            "self.grad = exponent * out.data / self.data * out.grad"),
    Mistake("exp-overflow-to-inf", "exp-inf",
            "turns an overflowing e^x into inf instead of letting OverflowError through",
            "out = Value(math.exp(self.data), (self,), 'exp')",
            "out = Value(math.exp(self.data) if self.data < 700 else math.inf, (self,), 'exp')"),
    Mistake("rtruediv-operands-swapped", "rtruediv-swapped",
            "computes self / other in __rtruediv__, so 2 / v gives v / 2",
            "return other * self ** -1", "return self * other ** -1"),
    Mistake("truediv-detached", "detached-4", "computes a / b as a fresh Value of the quotient, outside the graph",
            "return self * other ** -1", "return Value(self.data / _lift(other).data)"),

    # -- stage 5: topological backward -----------------------------------------------
    Mistake("order-skips-leaves", "order-misses",
            "follows only inputs that have inputs themselves, so the leaves are left out",
            "                    if child not in visited:  # one visited before is already in order\n",
            "                    if child not in visited and child._prev:\n"),
    Mistake("no-reverse", "no-reverse", "runs the rules in topological order, inputs first, instead of reversed",
            "for node in reversed(self.topological_order()):", "for node in self.topological_order():"),
    Mistake("no-visited-set", "no-visited", "keeps no visited set, so a node reached twice is listed twice",
            "            elif node not in visited:\n"
            "                visited.add(node)\n"
            "                stack.append((node, True))  # come back once its inputs are placed\n"
            "                for child in node._prev:\n"
            "                    if child not in visited:  # one visited before is already in order\n"
            "                        stack.append((child, False))\n",
            "            else:\n"
            "                stack.append((node, True))  # come back once its inputs are placed\n"
            "                for child in node._prev:\n"
            "                    stack.append((child, False))\n"),
    Mistake("visited-as-a-list", "visited-list", "keeps visited in a list, so each `in` compares with every node seen",
            ITERATIVE_ORDER[:ITERATIVE_ORDER.index("                stack.append((node, True))")],
            ITERATIVE_ORDER[:ITERATIVE_ORDER.index("                stack.append((node, True))")]
            .replace("[], set()", "[], []").replace("visited.add(node)", "visited.append(node)")),
    Mistake("root-not-seeded", "no-seed", "forgets to set the root's grad to 1.0 before running the rules",
            "        self.grad = 1.0  # d(self)/d(self)\n", ""),
    Mistake("outputs-before-inputs", "append-early",
            "appends a node to the order when first reached, before its inputs",
            "            if inputs_done:\n"
            "                order.append(node)  # every input of node is already in order\n"
            "            elif node not in visited:\n"
            "                visited.add(node)\n",
            "            if inputs_done:\n"
            "                pass\n"
            "            elif node not in visited:\n"
            "                visited.add(node)\n"
            "                order.append(node)\n"),
    Mistake("order-reversed-twice-over", "outputs-first",
            "returns the order outputs-first and walks it forwards in backward()",
            "        return order\n"
            "        # END SOLUTION\n"
            "\n"
            "    def backward(self):\n"
            "        \"\"\"Fill in .grad of every node self depends on: d(self)/d(node).\"\"\"\n"
            "        # BEGIN SOLUTION\n"
            "        self.grad = 1.0  # d(self)/d(self)\n"
            "        for node in reversed(self.topological_order()):\n",
            "        return order[::-1]\n"
            "        # END SOLUTION\n"
            "\n"
            "    def backward(self):\n"
            "        \"\"\"Fill in .grad of every node self depends on: d(self)/d(node).\"\"\"\n"
            "        # BEGIN SOLUTION\n"
            "        self.grad = 1.0  # d(self)/d(self)\n"
            "        for node in self.topological_order():\n"),
    Mistake("recursion-limit-raised", "recursion-limit",
            "keeps micrograd's recursive sort and raises the recursion limit",
            ITERATIVE_ORDER,
            "        import sys\n"
            "        sys.setrecursionlimit(1_000_000)\n" + RECURSIVE_ORDER),
    Mistake("recursive-topological-sort", "recursive-sort", "builds the order recursively, like micrograd",
            ITERATIVE_ORDER,
            RECURSIVE_ORDER),

    # -- stage 6: accumulate with += ---------------------------------------------------
    # every rule of the operations table assigning (=): made from its row (maintainer/mistake.py)
    *(rule_assigns(op) for op in rules()),

    Mistake("backward-zeroes-every-grad", "zeroes-every-grad",
            "zeroes every grad, leaves too, at the start of backward()",
            "        self.grad = 1.0  # d(self)/d(self)\n"
            "        for node in reversed(self.topological_order()):\n",
            "        order = self.topological_order()\n"
            "        for node in order:\n"
            "            node.grad = 0.0\n"
            "        self.grad = 1.0  # d(self)/d(self)\n"
            "        for node in reversed(order):\n"),

    # -- stage 7: zero_grad and retain_graph -------------------------------------------
    Mistake("zero-grad-skips-the-last", "zero-grad-some", "zero_grad() resets every parameter but the last",
            "        for p in self.parameters():\n            p.grad = 0.0\n",
            "        for p in self.parameters()[:-1]:\n            p.grad = 0.0\n"),
    Mistake("zero-grad-only-the-last", "zero-grad-some", "zero_grad() resets only the last parameter",
            "        for p in self.parameters():\n            p.grad = 0.0\n",
            "        for p in self.parameters()[-1:]:\n            p.grad = 0.0\n"),
    Mistake("second-backward-accepted", "no-release",
            "never releases the graph, so a second backward() silently adds up",
            "                node._backward = _spent  # used once: drop the closure and what it holds\n",
            "                pass\n"),
    Mistake("released-as-none", "release-none", "releases each rule as None instead of a function that refuses",
            "                node._backward = _spent  # used once: drop the closure and what it holds\n",
            "                node._backward = None\n"),
    Mistake("refuses-a-fresh-graph", "refuses-fresh",
            "refuses every graph whose rules are not spent, a fresh one included",
            "            if node._backward is _spent:\n",
            "            if node._prev and node._backward is not _spent:\n"),
    Mistake("refuses-too-late", "refuses-late", "lets the spent rule raise mid-pass, after the root was already seeded",
            "        for node in order:\n"
            "            if node._backward is _spent:\n"
            "                _spent()  # refuse before a single gradient changes\n",
            ""),
    Mistake("micrograd-one-to-three", "one-to-three",
            "keeps interior grads from the last pass, so retain_graph gives 1 -> 3",
            "        for node in order:\n"
            "            if node._prev:\n"
            "                node.grad = 0.0  # interior grads start fresh, so leaves get exactly one more copy\n",
            ""),

    Mistake("zero-grad-sets-int", "zero-grad-int", "zero_grad() sets each grad to the int 0",
            "        for p in self.parameters():\n            p.grad = 0.0\n",
            "        for p in self.parameters():\n            p.grad = 0\n"),
    Mistake("release-checked-on-the-root-only", "release-root-only", "refuses only when the root itself was released",
            "        for node in order:\n"
            "            if node._backward is _spent:\n"
            "                _spent()  # refuse before a single gradient changes\n",
            "        if self._backward is _spent:\n"
            "            _spent()  # refuse before a single gradient changes\n"),
    Mistake("release-of-the-root-only", "release-root-only",
            "releases only the root, so a new root on an interior node walks back again",
            "            if node._prev and not retain_graph:\n",
            "            if node is self and not retain_graph:\n"),
    Mistake("leaf-root-seeded-with-equals", "seed-equals",
            "seeds the root with = 1.0, so a leaf root forgets what it held",
            "        self.grad += 1.0  # d(self)/d(self); a leaf root adds, like every leaf\n",
            "        self.grad = 1.0  # d(self)/d(self)\n"),

    # -- stage 8: a network that learns --------------------------------------------------
    Mistake("mlp-never-unwraps", "never-unwraps", "returns the last layer's list even when it holds one Value",
            "return x[0] if len(x) == 1 else x", "return x"),
    Mistake("every-layer-takes-nin", "layer-inputs", "builds every layer with the MLP's nin inputs",
            "self.layers = [Layer(sizes[i], sizes[i + 1],", "self.layers = [Layer(nin, sizes[i + 1],"),
    Mistake("last-layer-relu", "last-relu", "puts a ReLU on the last layer too",
            "nonlin=i < len(nouts) - 1", "nonlin=True"),
    Mistake("no-hidden-relu", "no-hidden-relu", "forgets the ReLU: every neuron is linear",
            "return act.relu() if self.nonlin else act", "return act"),
    Mistake("neuron-without-bias", "neuron-formula", "leaves the bias out of the neuron's sum",
            "zip(self.w, x, strict=True)), self.b)", "zip(self.w, x, strict=True)), Value(0.0))"),
    Mistake("neuron-bias-per-input", "neuron-formula", "adds the bias once per input",
            "sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)",
            "sum((wi * xi + self.b for wi, xi in zip(self.w, x, strict=True)), Value(0.0))"),
    Mistake("zip-truncates", "zip-truncates",
            "zips weights and inputs without strict=True, so a short input is cut silently",
            "zip(self.w, x, strict=True)", "zip(self.w, x)"),
    Mistake("one-output-unwrapped-per-layer", "unwraps-one", "unwraps a one-neuron layer's output, as micrograd does",
            "        return [n(x) for n in self.neurons]  # always a list, even of one\n",
            "        out = [n(x) for n in self.neurons]\n"
            "        return out[0] if len(out) == 1 else out\n"),
    Mistake("seed-ignored", "seed-ignored", "draws weights from the global random module, ignoring the seed",
            "rng = random.Random(seed)", "rng = random"),
    Mistake("train-no-zero-grad", "train-no-zero-grad",
            "never zeroes the gradients in train(), so old steps leak into new ones",
            "        model.zero_grad()\n", ""),
    Mistake("seed-zero-taken-for-none", "seed-zero",
            "tests `if seed:`, so seed=0 is taken for no seed and draws fresh weights",
            "rng = random.Random(seed)", "rng = random.Random(seed) if seed else random.Random()"),
    Mistake("train-zeroes-after-the-step", "held-grads",
            "calls zero_grad() after each step's update, so the first step "
            "adds onto the gradients the model already held",
            "        model.zero_grad()\n        loss.backward()\n        for p in model.parameters():\n"
            "            p.data -= lr * p.grad\n",
            "        loss.backward()\n        for p in model.parameters():\n"
            "            p.data -= lr * p.grad\n        model.zero_grad()  # clean for the next step\n"),
    Mistake("train-zeroes-only-the-last-layer", "held-grads",
            "zeroes only the last layer's gradients in train(), so the other layers keep the ones they held",
            "        model.zero_grad()\n", "        model.layers[-1].zero_grad()\n"),
    Mistake("seed-reseeds-the-global-random", "global-random",
            "calls random.seed(seed) and draws from the global random module",
            "rng = random.Random(seed)", "random.seed(seed)\n        rng = random"),
    Mistake("train-sums-the-loss", "sums-loss", "trains on the summed squared error instead of its mean",
            "        loss = sum(errors) / len(errors)  # sum starts at 0, and 0 + Value is Value.__radd__\n",
            "        loss = sum(errors)\n"),
    Mistake("zero-grad-between-backward-and-update", "zero-grad-mid-step",
            "calls zero_grad() after backward(), so the update sees no gradient",
            "        model.zero_grad()\n        loss.backward()\n",
            "        loss.backward()\n        model.zero_grad()\n"),
    Mistake("train-climbs-the-gradient", "climbs", "adds lr * grad to each parameter instead of subtracting it",
            "p.data -= lr * p.grad", "p.data += lr * p.grad"),
    Mistake("train-keeps-the-loss-value", "keeps-loss-value", "stores the loss Value instead of loss.data",
            "losses.append(loss.data)", "losses.append(loss)"),
)
