"""Every clause of every stage's contract is tested: its smallest wrong implementation fails, by name.

Each stage test module's docstring states the stage's contract as named
clauses (``- [name] what holds``).  For every clause, ``CLAUSES`` holds one or more smallest wrong
implementations of it: an entry of the classic-mistake catalogue
(autograd_kata/maintainer/mistakes.py, checked by test_mistakes.py), or an edit
of the reference listed here.  Each edit is made in a scratch copy of the kata
(as test_mistakes.py does), the stage's tests run against it as a learner's
``exercises/`` module, and the stage must fail with the clause's words in its
output.  ``RIGHT`` holds edits that change how the reference does something,
not what it does: the stage must pass them (the tests judge effects, not calls).
"""
from __future__ import annotations

import ast
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from test_mistakes import ROOT, blame_report, mistaken_source, right_pieces_blamed, run_stage_with

from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.operations import rules
from autograd_kata.maintainer.mistakes import MISTAKES


@dataclass(frozen=True)
class Edit:
    id: str
    stage: int
    says: str
    old: str
    new: str
    phrase: str


CATALOGUE = {m.id for m in MISTAKES}

#: (stage, clause name) -> the smallest wrong implementations: catalogue ids or Edits.  A clause is
#: known by the name its docstring gives it (``- [name] ...``), so a clause added before it renames nothing
CLAUSES: dict[tuple[int, str], list] = {
    (1, "data-is-a-float"): ["data-kept-as-given",
             Edit("data-truncated", 1, "keeps only the whole part of the data, float(int(data))",
                  "self.data = float(data)", "self.data = float(int(data))", "a non-whole number is kept exactly")],
    (1, "grad-starts-at-zero"): ["grad-starts-as-int"],
    (1, "leaf-rule-is-a-no-op"): [Edit("leaf-rule-returns", 1, "the leaf's _backward returns 0.0",
                  '    """A leaf was made from nothing, so it has no one to pass a gradient to."""\n',
                  '    """A leaf was made from nothing, so it has no one to pass a gradient to."""\n    return 0.0\n',
                  "a leaf's rule is a no-op returning None")],
    (1, "children-and-label"): ["prev-is-a-tuple",
             Edit("op-dropped", 1, "never stores the label", "self._op = _op ", "self._op = '' ",
                  "_op keeps the label it was given")],
    (1, "repr"): [Edit("repr-data-only", 1, "repr shows only the data",
                  'return f"Value(data={self.data}, grad={self.grad})"', 'return f"Value({self.data})"',
                  "__repr__ returns 'Value(data=..., grad=...)'")],
    (1, "non-number-refused"): ["no-type-check",
             Edit("type-error-unnamed", 1, "raises TypeError without naming the type",
                  'raise TypeError(f"Value() takes an int or float, not {type(data).__name__}: {data!r}")',
                  'raise TypeError("Value() takes an int or float")',
                  "which does not name the type")],
    (2, "new-node"): [Edit("add-subtracts", 2, "__add__ computes the difference",
                  "out = Value(self.data + other.data, (self, other), '+')",
                  "out = Value(self.data - other.data, (self, other), '+')", "__add__ adds the two data")],
    (2, "parents-and-label"): [Edit("add-unlabelled", 2, "__add__ leaves the label empty",
                  "out = Value(self.data + other.data, (self, other), '+')",
                  "out = Value(self.data + other.data, (self, other))", "label the node '+'")],
    (2, "rules-hand-shares"): ["add-forgets-upstream", "mul-forgets-upstream", "mul-swapped-partials",
                               "add-passes-the-data"],
    (2, "operands-untouched"): [Edit("mul-adopts-the-operand", 2, "__mul__ records other as a parent of self too",
                  "        out = Value(self.data * other.data, (self, other), '*')\n",
                  "        self._prev.add(other)\n        out = Value(self.data * other.data, (self, other), '*')\n",
                  "operands stay leaves")],
    (3, "lift"): ["lift-raises"],
    (3, "constants-join"): [Edit("radd-swaps-to-sub", 3, "__radd__ subtracts", "        return self + other\n",
                  "        return self - other\n", "2 + v: Python calls v.__radd__(2)")],
    (3, "negation"): ["neg-detached"],
    (3, "subtraction"): ["rsub-operands-swapped", "sub-forgets-to-negate"],
    (3, "composition"): ["neg-detached"],
    (3, "unsupported-operands"): ["lift-raises",
             Edit("mul-raises-for-unsupported", 3, "__mul__ raises a TypeError itself, not NotImplemented",
                  "        if other is NotImplemented:\n            return NotImplemented\n"
                  "        out = Value(self.data * other.data, (self, other), '*')\n",
                  "        if other is NotImplemented:\n            raise TypeError('numbers only')\n"
                  "        out = Value(self.data * other.data, (self, other), '*')\n",
                  "v * Other() raised TypeError")],
    (4, "new-nodes"): [Edit("tanh-unlabelled", 4, "labels tanh 't'", "out = Value(t, (self,), 'tanh')",
                  "out = Value(t, (self,), 't')", "label the node 'tanh'")],
    (4, "slopes"): ["tanh-slope-from-input", "exp-slope-from-input", "relu-slope-one-at-zero",
                    "pow-exponent-off-by-one"],
    (4, "edges"): ["tanh-slope-via-cosh", "tanh-via-exp", "pow-slope-via-division", "exp-overflow-to-inf"],
    (4, "value-exponent-refused"): [Edit("pow-accepts-anything", 4, "never checks the exponent",
                  "        if not isinstance(exponent, (int, float)):\n",
                  "        if False:\n", "which does not say the problem is the exponent"),
             Edit("pow-error-unnamed", 4, "raises a TypeError that never names the exponent's type",
                  'f"Value ** exponent: the exponent must be an int or float, not {exponent!r} "',
                  'f"the exponent must be an int or float "', "which does not say the problem is the exponent")],
    (4, "division"): ["rtruediv-operands-swapped", "truediv-detached"],
    (4, "composition"): ["tanh-slope-from-input"],
    (5, "order"): ["no-visited-set", "outputs-before-inputs", "order-reversed-twice-over"],
    (5, "no-recursion"): ["recursive-topological-sort", "recursion-limit-raised"],
    (5, "every-rule-once"): ["root-not-seeded", "no-reverse"],
    (5, "lone-leaf"): [Edit("leaf-root-unseeded", 5, "seeds the root only when it has parents",
                  "        self.grad = 1.0  # d(self)/d(self)\n",
                  "        if self._prev:\n            self.grad = 1.0\n", "dx/dx = 1")],
    (5, "central-differences"): ["no-reverse"],
    # every rule of the operations table, assigning (=): test_every_rule_assigning_is_a_mistake
    (6, "rules-add"): [f"{op.name}-rule-assigns" for op in rules()],
    (6, "paths-sum"): ["mul-rule-assigns", "add-rule-assigns"],
    (6, "leaf-grads-kept"): ["backward-zeroes-every-grad"],
    (6, "agrees-with-pytorch"): ["pow-rule-assigns"],
    (7, "zero-grad"): ["zero-grad-skips-the-last", "zero-grad-sets-int",
             Edit("zero-grad-zeroes-data", 7, "zero_grad() resets the data too",
                  "        for p in self.parameters():\n            p.grad = 0.0\n",
                  "        for p in self.parameters():\n            p.grad = 0.0\n            p.data = 0.0\n",
                  "zero_grad() forgets gradients only")],
    (7, "grads-add-up"): ["leaf-root-seeded-with-equals",
             Edit("backward-resets-leaves", 7, "backward() zeroes the leaves' grads too",
                  "            if node._prev:\n                node.grad = 0.0  # interior",
                  "            if True:\n                node.grad = 0.0  # interior",
                  "backward() adds into leaf grads and never resets them")],
    (7, "graph-released"): ["second-backward-accepted", "release-of-the-root-only",
             Edit("retain-skips-the-check", 7, "skips the released-graph check when retain_graph=True",
                  "            if node._backward is _spent:\n",
                  "            if not retain_graph and node._backward is _spent:\n",
                  "retain_graph=True asked for too late")],
    (7, "refuses-first"): ["refuses-too-late", "release-checked-on-the-root-only"],
    (7, "retain-graph"): ["micrograd-one-to-three",
             Edit("retain-graph-ignored", 7, "releases the graph even with retain_graph=True",
                  "            if node._prev and not retain_graph:\n", "            if node._prev:\n",
                  "backward(retain_graph=True) keeps the graph")],
    (7, "fit-needs-zero-grad"): ["zero-grad-skips-the-last"],
    (8, "neuron"): ["no-hidden-relu",
             Edit("bias-drawn-at-random", 8, "draws the bias at random too",
                  "        self.b = Value(0.0)\n", "        self.b = Value(rng.uniform(-1, 1))\n",
                  "the bias starts at 0.0")],
    (8, "layer"): ["one-output-unwrapped-per-layer"],
    (8, "mlp"): ["last-layer-relu",
             Edit("parameters-without-bias", 8, "a neuron's parameters() leaves out the bias",
                  "        return self.w + [self.b]\n", "        return self.w\n",
                  "one weight per input plus one bias")],
    (8, "seed"): ["seed-ignored", "seed-reseeds-the-global-random", "seed-zero-taken-for-none"],
    (8, "lengths-checked"): ["zip-truncates",
             Edit("train-zip-truncates", 8, "train() zips inputs and targets without strict=True",
                  "zip(xs, ys, strict=True)", "zip(xs, ys)", "3 inputs but 2 targets")],
    (8, "train"): ["train-no-zero-grad", "train-zeroes-after-the-step", "train-climbs-the-gradient",
             "train-keeps-the-loss-value", "train-sums-the-loss"],
}



def reflected_ops_aliased(number: int) -> Edit:
    """``__radd__ = __add__`` and ``__rmul__ = __mul__`` in stage ``number``: a common idiom, right
    because + and * commute; 'a' + v then gives Python's "can only concatenate str", a TypeError too."""
    body = "        return self {} other\n"
    if number == 3:  # the stage that writes them: inside solution markers
        body = "        # BEGIN SOLUTION\n" + body + "        # END SOLUTION\n"
    return Edit(f"reflected-ops-aliased-{number}", number, "writes __radd__ = __add__ and __rmul__ = __mul__",
                "    def __radd__(self, other):  # other + self, when other is a plain number\n" + body.format("+")
                + "\n    def __rmul__(self, other):  # other * self\n" + body.format("*"),
                "    __radd__ = __add__  # n + v is v + n: + and * commute\n    __rmul__ = __mul__\n", "")


#: Other ways to write what the reference does: the stage must pass them.
RIGHT = [
    *(reflected_ops_aliased(s.number) for s in STAGES if s.number >= 3),
    Edit("pow-refuses-in-japanese", 4, "raises the Value-exponent TypeError with a message in Japanese",
         'f"Value ** exponent: the exponent must be an int or float, not {exponent!r} "\n'
         '                f"(no gradient flows into an exponent here)"',
         'f"指数は int か float にしてください（{type(exponent).__name__} は使えません）"', ""),
    Edit("train-zeroes-by-hand", 8, "train() zeroes every parameter's grad itself instead of model.zero_grad()",
         "        model.zero_grad()\n", "        for p in model.parameters():\n            p.grad = 0.0\n", ""),
    Edit("rules-add-longhand", 6, "writes the add rule as self.grad = self.grad + out.grad",
         "            self.grad += out.grad    # d(a+b)/da = 1  # STUB:",
         "            self.grad = self.grad + out.grad    # d(a+b)/da = 1  # STUB:", ""),
    Edit("zero-grad-by-index", 7, "zero_grad() walks the parameters by index",
         "        for p in self.parameters():\n            p.grad = 0.0\n",
         "        ps = self.parameters()\n        for i in range(len(ps)):\n            ps[i].grad = 0.0\n", ""),
]

EDITS = [e for entries in CLAUSES.values() for e in entries if isinstance(e, Edit)]


#: a clause of a stage's contract, in its test module's docstring: ``- [name] what holds``
CLAUSE = re.compile(r"^- \[([a-z0-9-]+)\] ", flags=re.MULTILINE)


def clauses_of(number: int) -> list[str]:
    """The clause names in the docstring of stage ``number``'s test module, in order."""
    path = ROOT / stage(number).test_file
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return CLAUSE.findall(doc)


def test_every_clause_of_every_stage_has_a_smallest_wrong_implementation():
    for s in STAGES:
        names = clauses_of(s.number)
        assert names, f"{s.test_file}: its docstring states no contract clauses ('- [name] what holds')"
        assert len(set(names)) == len(names), f"{s.test_file}: a clause name is given twice: {names}"
        for name in names:
            assert CLAUSES.get((s.number, name)), \
                f"stage {s.number} clause [{name}] has no wrong implementation in CLAUSES of {__file__}"
    stated = {(s.number, name) for s in STAGES for name in clauses_of(s.number)}
    assert set(CLAUSES) <= stated, f"CLAUSES names clauses no docstring states: {sorted(set(CLAUSES) - stated)}"
    for entries in CLAUSES.values():
        for entry in entries:
            assert isinstance(entry, Edit) or entry in CATALOGUE, f"{entry!r} is no catalogued mistake"


def test_every_rule_assigning_is_a_mistake():
    """Stage 6's clause [rules-add] covers every rule of the operations table: each has its
    `<name>-rule-assigns` mistake in the catalogue, so a new rule gets its wrong twin."""
    missing = [f"{op.name}-rule-assigns" for op in rules() if f"{op.name}-rule-assigns" not in CATALOGUE]
    assert not missing, (
        f"the operations table's rules {missing} have no mistake in autograd_kata/maintainer/mistakes.py: "
        f"add Mistake(\"<name>-rule-assigns\", 6, ...), the rule with = instead of += (README: Adding an operation)")


@pytest.fixture(scope="session")
def runs(request, tmp_path_factory):
    """Every selected edit's stage run, started together; {id: CompletedProcess or error}."""
    chosen = [item.callspec.params["edit"] for item in request.session.items
              if hasattr(item, "callspec") and "edit" in item.callspec.params]
    places = [tmp_path_factory.mktemp(e.id) for e in chosen]

    def one(edit, where):
        try:
            return run_stage_with(edit, where)
        except BaseException as error:  # noqa: BLE001 - reported by the edit's own test
            return error

    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        return dict(zip((e.id for e in chosen), pool.map(one, chosen, places), strict=True))


def outcome(edit, runs):
    done = runs[edit.id]
    if isinstance(done, BaseException):
        raise done
    return done, done.stdout + done.stderr


@pytest.mark.timeout(1200)  # the first test waits for every stage run (the shared fixture)
@pytest.mark.parametrize("edit", EDITS, ids=[e.id for e in EDITS])
def test_the_clause_breaks_the_stage_by_name(edit, runs):
    done, output = outcome(edit, runs)
    where = f"stage {edit.stage} with {edit.says}"
    assert done.returncode == 1, f"{where}: pytest exited {done.returncode}, expected 1\n{output[-3000:]}"
    assert edit.phrase in output, f"{where}: the stage fails but never says {edit.phrase!r}\n{output[-3000:]}"


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("edit", EDITS, ids=[e.id for e in EDITS])
def test_a_broken_clause_blames_no_right_piece(edit, runs):
    """Not blamed elsewhere, for the wrong implementations beyond the catalogue: a clause broken
    here leaves every catalogued mistake's code of its stage that it does not touch as the
    reference has it, and none of their phrases may be said."""
    _, output = outcome(edit, runs)
    blamed = right_pieces_blamed(edit.stage, mistaken_source(edit), output, edit.phrase)
    assert not blamed, blame_report(f"stage {edit.stage} with {edit.says}", blamed, output)


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("edit", RIGHT, ids=[e.id for e in RIGHT])
def test_another_right_way_passes(edit, runs):
    done, output = outcome(edit, runs)
    assert done.returncode == 0, (f"stage {edit.stage} fails for right code that {edit.says}: the tests must "
                                  f"judge the effect, not the call\n{output[-3000:]}")


#: Mistakes the property tests (random graphs, -m properties) must catch on their own.
NETTED = ["tanh-slope-from-input", "mul-rule-assigns", "micrograd-one-to-three", "no-hidden-relu"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("hidden", [None, "20261201"], ids=["fixed", "hidden_seed"])
@pytest.mark.parametrize("mistake_id", NETTED)
def test_the_property_tests_catch_a_mistake_on_their_own(mistake_id, hidden, tmp_path):
    mistake = next(m for m in MISTAKES if m.id == mistake_id)
    done = run_stage_with(mistake, tmp_path, "-k", "random", *(() if hidden else ("-m", "properties")),
                          env_extra={"KATA_HIDDEN_SEED": hidden} if hidden else None)
    output = done.stdout + done.stderr
    assert done.returncode == 1 and "1 failed" in output, (
        f"stage {mistake.stage} with {mistake.says}: the property test did not fail\n{output[-3000:]}")
    assert "central differences" in output or "retain_graph" in output, output[-3000:]


# 64 seeds x ~40 examples: 0.25 s of CPU a seed measured at load 10-15 (18 s for the stage-2 case),
# where pytest's 10 s limit for tool tests cut it short (it failed 2 runs of 3 at load 8); it tests
# which operations appear, not speed, so it gets a limit a loaded machine meets; no seed is dropped
@pytest.mark.timeout(300)
@pytest.mark.parametrize("stage_ops,reuse", [(2, False), (3, False), (4, False), (4, True)])
def test_random_graphs_use_only_the_operations_of_their_stage(stage_ops, reuse, monkeypatch):
    """Under a hidden seed a right engine must never meet an operation its stage has not
    taught: a graph whose root needed fixing once ended in `+ 0.5`, a constant operand
    that stage 2 cannot take (seed 130 failed the stage-2 reference)."""
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    import graphs
    allowed = {"leaf", *graphs.ops_up_to(stage_ops)}
    for hidden in ("130", "163", "165", "245", "258", *map(str, range(1, 60))):
        monkeypatch.setattr(graphs, "HIDDEN", hidden)
        seen = []
        graphs.for_all(graphs.SMALL, graphs.graphs(graphs.ops_up_to(stage_ops), reuse=reuse), seen.append)
        for steps in seen:
            assert {op for op, _, _ in steps} <= allowed, (hidden, steps)
            assert all(a < i for i, (_, args, _) in enumerate(steps) for a in args), (hidden, steps)
