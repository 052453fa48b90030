"""The classic-mistake catalogue: the wrong turns a learner takes, stage by stage.

Data only.  Each entry says, in the learner's words, what goes wrong; how to
make that mistake in the reference module of its stage (``old`` -> ``new``,
exact text that must occur exactly once, so the catalogue cannot rot when the
reference changes); and the phrase the stage's test output must then contain,
so the learner is told *which* mistake they made.

``tooltests/test_mistakes.py`` applies every entry to a copy of the
reference, runs that stage's tests against it as a learner would (``--impl
exercises``), and checks that the stage fails and names the mistake.  To add
one: append a ``Mistake`` here; if its test fails, the stage tests need a
message (or an input) that tells this mistake apart.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    id: str       # short, unique, for test ids
    stage: int
    says: str     # the mistake, as a learner would describe what they did
    old: str      # exact text of solutions/stageNN_*.py, found exactly once
    new: str      # what the mistaken learner wrote instead
    phrase: str   # the failing stage's output must contain this


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
    Mistake("grad-starts-as-int", 1, "starts grad at the int 0 instead of the float 0.0",
            "self.grad = 0.0 ", "self.grad = 0 ",
            "expected the float 0.0"),
    Mistake("data-kept-as-given", 1, "keeps data as given (an int stays an int) instead of float(data)",
            "self.data = float(data)", "self.data = data",
            "store float(data)"),
    Mistake("prev-is-a-tuple", 1, "keeps the children as the tuple they came in, not a set",
            "self._prev = set(_children)", "self._prev = _children",
            "expected a set"),
    Mistake("no-type-check", 1, "accepts anything float() accepts, so Value('3') is stored",
            "        if not isinstance(data, (float, int)):  # float first: what every op passes\n"
            "            raise TypeError(f\"Value() takes an int or float, not {type(data).__name__}: {data!r}\")\n",
            "",
            "must be refused, not stored"),

    # -- stage 2: add and mul --------------------------------------------------------
    Mistake("add-forgets-upstream", 2, "adds 1 to each parent instead of 1 * out.grad",
            "            self.grad = out.grad    # d(a+b)/da = 1\n"
            "            other.grad = out.grad   # d(a+b)/db = 1\n",
            "            self.grad = 1.0\n"
            "            other.grad = 1.0\n",
            "forgot `* out.grad`"),
    Mistake("mul-forgets-upstream", 2, "hands each parent the other operand without multiplying by out.grad",
            "            self.grad = other.data * out.grad   # d(ab)/da = b\n"
            "            other.grad = self.data * out.grad   # d(ab)/db = a\n",
            "            self.grad = other.data\n"
            "            other.grad = self.data\n",
            "forgot `* out.grad`"),
    Mistake("mul-swapped-partials", 2, "gives each factor its own value instead of the other one's",
            "            self.grad = other.data * out.grad   # d(ab)/da = b\n"
            "            other.grad = self.data * out.grad   # d(ab)/db = a\n",
            "            self.grad = self.data * out.grad\n"
            "            other.grad = other.data * out.grad\n",
            "swapped the partials"),
    Mistake("add-passes-the-data", 2, "hands each parent out.data instead of out.grad",
            "            self.grad = out.grad    # d(a+b)/da = 1\n"
            "            other.grad = out.grad   # d(a+b)/db = 1\n",
            "            self.grad = out.data\n"
            "            other.grad = out.data\n",
            "hands on out.data, not out.grad"),

    # -- stage 3: constants and reflected ops ----------------------------------------
    Mistake("neg-detached", 3, "makes -v a fresh Value(-v.data), cut off from v",
            "return -1 * self", "return Value(-self.data)",
            "detached from the graph"),
    Mistake("rsub-operands-swapped", 3, "computes self - other in __rsub__, so 1 - v gives v - 1",
            "return other + (-self)", "return self + (-other)",
            "operands swapped: 1 - v is not v - 1"),
    Mistake("sub-forgets-to-negate", 3, "adds other in __sub__ instead of its negation",
            "return self + (-other)", "return self + other",
            "forgot to negate"),
    Mistake("lift-raises", 3, "raises its own TypeError for a string instead of returning NotImplemented",
            "        return Value(x)\n    return NotImplemented\n",
            "        return Value(x)\n    raise TypeError(f\"cannot use {x!r} in a Value expression\")\n",
            "return NotImplemented for unsupported operands"),

    # -- stage 4: tanh and the same recipe -------------------------------------------
    Mistake("tanh-slope-from-input", 4, "computes tanh's slope from the input, 1 - x*x",
            "self.grad = (1 - t * t) * out.grad", "self.grad = (1 - self.data * self.data) * out.grad",
            "tanh's slope comes from its output t: 1 - t*t, not from the input x"),
    Mistake("tanh-one-minus-t", 4, "writes tanh's slope as 1 - t instead of 1 - t*t",
            "self.grad = (1 - t * t) * out.grad", "self.grad = (1 - t) * out.grad",
            "1 - t*t, not 1 - t"),
    Mistake("tanh-forgets-upstream", 4, "passes tanh's slope on without multiplying by out.grad",
            "self.grad = (1 - t * t) * out.grad", "self.grad = (1 - t * t)",
            "forgot `* out.grad`"),
    Mistake("exp-slope-from-input", 4, "uses the input x as exp's slope instead of its output e^x",
            "self.grad = out.data * out.grad   # e^x is its own slope",
            "self.grad = self.data * out.grad",
            "exp's slope is its own output e^x, not x"),
    Mistake("relu-slope-one-at-zero", 4, "lets the gradient through at exactly 0 (>= 0 instead of > 0)",
            "self.grad = (out.data > 0) * out.grad", "self.grad = (self.data >= 0) * out.grad",
            "ReLU's slope is 0 at and below 0"),
    Mistake("relu-slope-always-one", 4, "passes out.grad straight through ReLU, negative inputs too",
            "self.grad = (out.data > 0) * out.grad", "self.grad = out.grad",
            "ReLU's slope is 0 at and below 0"),
    Mistake("pow-exponent-off-by-one", 4, "writes the power rule as n * x**n instead of n * x**(n-1)",
            "self.grad = exponent * self.data ** (exponent - 1) * out.grad",
            "self.grad = exponent * self.data ** exponent * out.grad",
            "exponent off by one?"),
    Mistake("tanh-slope-via-cosh", 4, "writes tanh's slope as 1/cosh(x)**2, which overflows far from 0",
            "self.grad = (1 - t * t) * out.grad", "self.grad = out.grad / math.cosh(self.data) ** 2",
            "a formula through exp or cosh overflows far from 0"),
    Mistake("tanh-via-exp", 4, "computes tanh from exp, (e^2x - 1) / (e^2x + 1), which overflows far from 0",
            "t = math.tanh(self.data)", "t = (math.exp(2 * self.data) - 1) / (math.exp(2 * self.data) + 1)",
            "a formula through exp or cosh overflows far from 0"),
    Mistake("pow-slope-via-division", 4, "computes the power slope as n * out.data / x, dividing by zero at 0",
            "self.grad = exponent * self.data ** (exponent - 1) * out.grad",
            "self.grad = exponent * out.data / self.data * out.grad",
            "not n * out.data / x, which divides by zero"),
    Mistake("exp-overflow-to-inf", 4, "turns an overflowing e^x into inf instead of letting OverflowError through",
            "out = Value(math.exp(self.data), (self,), 'exp')",
            "out = Value(math.exp(self.data) if self.data < 700 else math.inf, (self,), 'exp')",
            "never a silent inf"),
    Mistake("rtruediv-operands-swapped", 4, "computes self / other in __rtruediv__, so 2 / v gives v / 2",
            "return other * self ** -1", "return self * other ** -1",
            "operands swapped: 2 / v is not v / 2"),
    Mistake("truediv-detached", 4, "computes a / b as a fresh Value of the quotient, outside the graph",
            "return self * other ** -1", "return Value(self.data / _lift(other).data)",
            "detached from the graph"),

    # -- stage 5: topological backward -----------------------------------------------
    Mistake("order-skips-leaves", 5, "follows only inputs that have inputs themselves, so the leaves are left out",
            "                    if child not in visited:  # one visited before is already in order\n",
            "                    if child not in visited and child._prev:\n",
            "a node is left out"),
    Mistake("no-reverse", 5, "runs the rules in topological order, inputs first, instead of reversed",
            "for node in reversed(self.topological_order()):", "for node in self.topological_order():",
            "reverse the topological order"),
    Mistake("no-visited-set", 5, "keeps no visited set, so a node reached twice is listed twice",
            "            elif node not in visited:\n"
            "                visited.add(node)\n"
            "                stack.append((node, True))  # come back once its inputs are placed\n"
            "                for child in node._prev:\n"
            "                    if child not in visited:  # one visited before is already in order\n"
            "                        stack.append((child, False))\n",
            "            else:\n"
            "                stack.append((node, True))  # come back once its inputs are placed\n"
            "                for child in node._prev:\n"
            "                    stack.append((child, False))\n",
            "each node once"),
    Mistake("root-not-seeded", 5, "forgets to set the root's grad to 1.0 before running the rules",
            "        self.grad = 1.0  # d(self)/d(self)\n", "",
            "seed the root"),
    Mistake("outputs-before-inputs", 5, "appends a node to the order when first reached, before its inputs",
            "            if inputs_done:\n"
            "                order.append(node)  # every input of node is already in order\n"
            "            elif node not in visited:\n"
            "                visited.add(node)\n",
            "            if inputs_done:\n"
            "                pass\n"
            "            elif node not in visited:\n"
            "                visited.add(node)\n"
            "                order.append(node)\n",
            "a node appended when first reached comes before its inputs"),
    Mistake("order-reversed-twice-over", 5, "returns the order outputs-first and walks it forwards in backward()",
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
            "        for node in self.topological_order():\n",
            "your list is exactly outputs-first"),
    Mistake("recursion-limit-raised", 5, "keeps micrograd's recursive sort and raises the recursion limit",
            ITERATIVE_ORDER,
            "        import sys\n"
            "        sys.setrecursionlimit(1_000_000)\n" + RECURSIVE_ORDER,
            "do not raise it"),
    Mistake("recursive-topological-sort", 5, "builds the order recursively, like micrograd",
            ITERATIVE_ORDER,
            RECURSIVE_ORDER,
            "RecursionError"),

    # -- stage 6: accumulate with += ---------------------------------------------------
    Mistake("add-rule-assigns", 6, "assigns (=) in the add rule, so a + a gets one share",
            "            other.grad += out.grad   # d(a+b)/db = 1  # STUB:",
            "            other.grad = out.grad   # d(a+b)/db = 1  # STUB:",
            "the add rule assigns (=) instead of adding (+=)"),
    Mistake("mul-rule-assigns", 6, "assigns (=) in the mul rule, so a * a gets one share",
            "            self.grad += other.data * out.grad   # d(ab)/da = b  # STUB:",
            "            self.grad = other.data * out.grad   # d(ab)/da = b  # STUB:",
            "the mul rule assigns (=) instead of adding (+=)"),
    Mistake("tanh-rule-assigns", 6, "assigns (=) in the tanh rule",
            "self.grad += (1 - t * t) * out.grad   # the slope, read off the output t  # STUB:",
            "self.grad = (1 - t * t) * out.grad   # the slope, read off the output t  # STUB:",
            "the tanh rule assigns (=) instead of adding (+=)"),
    Mistake("exp-rule-assigns", 6, "assigns (=) in the exp rule",
            "self.grad += out.data * out.grad   # e^x is its own slope  # STUB:",
            "self.grad = out.data * out.grad   # e^x is its own slope  # STUB:",
            "the exp rule assigns (=) instead of adding (+=)"),
    Mistake("relu-rule-assigns", 6, "assigns (=) in the relu rule, wiping what other paths left",
            "self.grad += (out.data > 0) * out.grad   # slope 1 above 0; 0 at and below 0, as PyTorch  # STUB:",
            "self.grad = (out.data > 0) * out.grad   # slope 1 above 0; 0 at and below 0, as PyTorch  # STUB:",
            "the relu rule assigns (=) instead of adding (+=)"),
    Mistake("pow-rule-assigns", 6, "assigns (=) in the pow rule",
            "self.grad += exponent * self.data ** (exponent - 1) * out.grad  # STUB:",
            "self.grad = exponent * self.data ** (exponent - 1) * out.grad  # STUB:",
            "the pow rule assigns (=) instead of adding (+=)"),

    Mistake("backward-zeroes-every-grad", 6, "zeroes every grad, leaves too, at the start of backward()",
            "        self.grad = 1.0  # d(self)/d(self)\n"
            "        for node in reversed(self.topological_order()):\n",
            "        order = self.topological_order()\n"
            "        for node in order:\n"
            "            node.grad = 0.0\n"
            "        self.grad = 1.0  # d(self)/d(self)\n"
            "        for node in reversed(order):\n",
            "the mul rule adds, yet the first share is gone"),

    # -- stage 7: zero_grad and retain_graph -------------------------------------------
    Mistake("zero-grad-skips-the-last", 7, "zero_grad() resets every parameter but the last",
            "        for p in self.parameters():\n            p.grad = 0.0\n",
            "        for p in self.parameters()[:-1]:\n            p.grad = 0.0\n",
            "zero_grad() must reset every parameter"),
    Mistake("zero-grad-only-the-last", 7, "zero_grad() resets only the last parameter",
            "        for p in self.parameters():\n            p.grad = 0.0\n",
            "        for p in self.parameters()[-1:]:\n            p.grad = 0.0\n",
            "zero_grad() must reset every parameter"),
    Mistake("second-backward-accepted", 7, "never releases the graph, so a second backward() silently adds up",
            "                node._backward = _spent  # used once: drop the closure and what it holds\n",
            "                pass\n",
            "but nothing was raised: the first backward() released the graph"),
    Mistake("refuses-a-fresh-graph", 7, "refuses every graph whose rules are not spent, a fresh one included",
            "            if node._backward is _spent:\n",
            "            if node._prev and node._backward is not _spent:\n",
            "this graph was never walked back"),
    Mistake("refuses-too-late", 7, "lets the spent rule raise mid-pass, after the root was already seeded",
            "        for node in order:\n"
            "            if node._backward is _spent:\n"
            "                _spent()  # refuse before a single gradient changes\n",
            "",
            "refuse before any grad changes"),
    Mistake("micrograd-one-to-three", 7, "keeps interior grads from the last pass, so retain_graph gives 1 -> 3",
            "        for node in order:\n"
            "            if node._prev:\n"
            "                node.grad = 0.0  # interior grads start fresh, so leaves get exactly one more copy\n",
            "",
            "1 -> 2 as in PyTorch, not 1 -> 3 as in micrograd"),

    Mistake("zero-grad-sets-int", 7, "zero_grad() sets each grad to the int 0",
            "        for p in self.parameters():\n            p.grad = 0.0\n",
            "        for p in self.parameters():\n            p.grad = 0\n",
            "not the int 0"),
    Mistake("release-checked-on-the-root-only", 7, "refuses only when the root itself was released",
            "        for node in order:\n"
            "            if node._backward is _spent:\n"
            "                _spent()  # refuse before a single gradient changes\n",
            "        if self._backward is _spent:\n"
            "            _spent()  # refuse before a single gradient changes\n",
            "backward() releases the whole graph, every interior node, not only its root"),
    Mistake("release-of-the-root-only", 7, "releases only the root, so a new root on an interior node walks back again",
            "            if node._prev and not retain_graph:\n",
            "            if node is self and not retain_graph:\n",
            "backward() releases the whole graph, every interior node, not only its root"),
    Mistake("leaf-root-seeded-with-equals", 7, "seeds the root with = 1.0, so a leaf root forgets what it held",
            "        self.grad += 1.0  # d(self)/d(self); a leaf root adds, like every leaf\n",
            "        self.grad = 1.0  # d(self)/d(self)\n",
            "seeding with = 1.0 throws the old gradient away"),

    # -- stage 8: a network that learns --------------------------------------------------
    Mistake("mlp-never-unwraps", 8, "returns the last layer's list even when it holds one Value",
            "return x[0] if len(x) == 1 else x", "return x",
            "expected a single Value (so that loss"),
    Mistake("every-layer-takes-nin", 8, "builds every layer with the MLP's nin inputs",
            "self.layers = [Layer(sizes[i], sizes[i + 1],", "self.layers = [Layer(nin, sizes[i + 1],",
            "a layer's inputs are the outputs of the layer before"),
    Mistake("last-layer-relu", 8, "puts a ReLU on the last layer too",
            "nonlin=i < len(nouts) - 1", "nonlin=True",
            "the last layer must be linear"),
    Mistake("no-hidden-relu", 8, "forgets the ReLU: every neuron is linear",
            "return act.relu() if self.nonlin else act", "return act",
            "hidden layers apply ReLU"),
    Mistake("zip-truncates", 8, "zips weights and inputs without strict=True, so a short input is cut silently",
            "zip(self.w, x, strict=True)", "zip(self.w, x)",
            "zip(..., strict=True)"),
    Mistake("one-output-unwrapped-per-layer", 8, "unwraps a one-neuron layer's output, as micrograd does",
            "        return [n(x) for n in self.neurons]  # always a list, even of one\n",
            "        out = [n(x) for n in self.neurons]\n"
            "        return out[0] if len(out) == 1 else out\n",
            "a 1-wide hidden layer must hand the next layer a list of one Value"),
    Mistake("seed-ignored", 8, "draws weights from the global random module, ignoring the seed",
            "rng = random.Random(seed)", "rng = random",
            "the same seed gives the same numbers"),
    Mistake("train-no-zero-grad", 8, "never zeroes the gradients in train(), so old steps leak into new ones",
            "        model.zero_grad()\n", "",
            "old gradients leak into later steps"),
    Mistake("seed-zero-taken-for-none", 8, "tests `if seed:`, so seed=0 is taken for no seed and draws fresh weights",
            "rng = random.Random(seed)", "rng = random.Random(seed) if seed else random.Random()",
            "0 is a seed like any other"),
    Mistake("train-zeroes-after-the-step", 8, "calls zero_grad() after each step's update, so the first step "
            "adds onto the gradients the model already held",
            "        model.zero_grad()\n        loss.backward()\n        for p in model.parameters():\n"
            "            p.data -= lr * p.grad\n",
            "        loss.backward()\n        for p in model.parameters():\n"
            "            p.data -= lr * p.grad\n        model.zero_grad()  # clean for the next step\n",
            "let the gradients the model already held into its first step"),
    Mistake("seed-reseeds-the-global-random", 8, "calls random.seed(seed) and draws from the global random module",
            "rng = random.Random(seed)", "random.seed(seed)\n        rng = random",
            "leave the global random state alone"),
    Mistake("train-sums-the-loss", 8, "trains on the summed squared error instead of its mean",
            "        loss = sum(errors) / len(errors)  # sum starts at 0, and 0 + Value is Value.__radd__\n",
            "        loss = sum(errors)\n",
            "divide the sum by len(xs)"),
    Mistake("train-climbs-the-gradient", 8, "adds lr * grad to each parameter instead of subtracting it",
            "p.data -= lr * p.grad", "p.data += lr * p.grad",
            "uphill"),
    Mistake("train-keeps-the-loss-value", 8, "stores the loss Value instead of loss.data",
            "losses.append(loss.data)", "losses.append(loss)",
            "store loss.data (a float)"),
)
