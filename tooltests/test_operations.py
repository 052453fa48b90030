"""The operations table (autograd_kata/core/operations.py) tells the truth, and README's
recipe "Adding an operation" works: followed in a scratch copy with ``log()``, every
reader of the table (random graphs, stage 6's rule probe and contract, kata graph,
PyTorch parity, the rule count of test_build, README's counts) picks the new op up."""
from __future__ import annotations

import importlib
import importlib.util
import math
import os
import re
import sys
from pathlib import Path

import pytest

from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.operations import OPERATIONS, methods
from kit import ROOT, run, working_tree

POINTS = (-1.7, -0.6, 0.35, 0.9, 2.2)


def defined_points(op, c):
    """(xs, value) at the sample points where ``op`` is defined and smooth (a binary op's
    second operand is 0.8 - x: both signs, never the first's value)."""
    found = []
    for x in POINTS:
        xs = [x, 0.8 - x][:op.arity]
        try:
            y = op.forward(xs, c)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if isinstance(y, float | int) and op.smooth(xs, c):
            found.append((xs, y))
    return found


def cases():
    return [(op, c) for op in OPERATIONS for c in (op.consts or (0.0,))]


def test_names_are_unique_and_each_stage_is_the_manifests():
    names = [op.name for op in OPERATIONS]
    assert len(set(names)) == len(names), f"an operation is declared twice: {sorted(names)}"
    known = {s.number for s in STAGES}
    for op in OPERATIONS:
        assert op.stage in known, f"{op.name}: stage {op.stage} is none of the manifest's {sorted(known)}"
        assert op.arity in (1, 2), f"{op.name}: arity {op.arity} (an op takes one Value or two)"
        assert ("{1}" in op.text) == (op.arity == 2), \
            f"{op.name}: its formula {op.text!r} does not fit arity {op.arity}"
        assert not (op.arity == 2 and op.consts), f"{op.name}: a binary op draws no constant"
        assert not (op.example and op.example not in op.consts), \
            f"{op.name}: its example constant {op.example} is not one a random graph draws {op.consts}"


@pytest.mark.parametrize(("op", "c"), cases(), ids=[f"{op.name}-{c:g}" for op, c in cases()])
def test_each_derivative_is_the_slope_of_its_forward(op, c):
    points = defined_points(op, c)
    assert len(points) >= 2, f"{op.name} (c = {c:g}) is defined and smooth at fewer than 2 of {POINTS}"
    h = 1e-6
    for xs, _ in points:
        for i, slope in enumerate(op.derivative(xs, c)):
            up, down = list(xs), list(xs)
            up[i] += h
            down[i] -= h
            numeric = (op.forward(up, c) - op.forward(down, c)) / (2 * h)
            assert math.isclose(slope, numeric, rel_tol=1e-5, abs_tol=1e-6), (
                f"{op.name} (c = {c:g}) at {xs}: the table's derivative says d/dx{i} = {slope!r}, "
                f"central differences give {numeric!r}")


@pytest.mark.parametrize(("op", "c"), cases(), ids=[f"{op.name}-{c:g}" for op, c in cases()])
def test_the_reference_engine_agrees_with_the_table(op, c):
    """The table's forward and derivative are the reference's value and gradient, in the
    first stage that has the op and in the last: a rule by its own closure, an op built
    from others (a - b is a + (-b)) by backward(), where the stage has it."""
    for s in (stage(op.stage), STAGES[-1]):
        engine = importlib.import_module(f"solutions.{s.module}")
        for xs, y in defined_points(op, c):
            values = [engine.Value(x) for x in xs]
            out = op.value(values, c)
            formula = op.text.format("x0", "x1", c=f"{c:g}")
            assert math.isclose(out.data, y, rel_tol=1e-12), \
                f"{s.module}: {formula} at {xs} is {out.data!r}, the table says {y!r}"
            if op.rule:
                out.grad = 1.0
                out._backward()
            elif hasattr(out, "backward"):
                out.backward()
            else:
                continue
            got, want = [v.grad for v in values], list(op.derivative(xs, c))
            assert all(math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12) for g, w in zip(got, want, strict=True)), \
                f"{s.module}: the gradient of {formula} at {xs} is {got} in the reference, {want} by the table"


def test_each_method_appears_in_its_stage_and_not_before():
    for op in OPERATIONS:
        if op.method is None:
            continue
        here = importlib.import_module(f"solutions.{stage(op.stage).module}").Value
        assert hasattr(here, op.method), f"{op.name}: stage {op.stage}'s Value has no method {op.method}"
        if op.stage > 1:
            before = importlib.import_module(f"solutions.{stage(op.stage - 1).module}").Value
            assert not hasattr(before, op.method), \
                f"{op.name}: stage {op.stage - 1}'s Value already has {op.method}, the table says stage {op.stage}"


def test_the_picture_tool_allows_exactly_the_tables_methods():
    from autograd_kata.pictures.expression import METHODS
    assert METHODS == methods()


# ------------------------------------------------------------------ the recipe, with log()

ENGINE_LOG = '''\
    def log(self):
        """A new node ln(self), label 'log'."""
        # BEGIN SOLUTION
        out = Value(math.log(self.data), (self,), 'log')

        def _backward():
            self.grad += out.grad / self.data   # the slope of ln x is 1/x  # before 6: self.grad = out.grad / self.data
        out._backward = _backward
        return out
        # END SOLUTION

'''
TABLE_LOG = '''\
    Operation("log", 4, 1, lambda xs, c: math.log(xs[0]), lambda xs, c: (1 / xs[0],),
              lambda xs, c: xs[0].log(), "{0}.log()", smooth=lambda xs, c: xs[0] > 0.2, method="log", rule=True,
              twin=lambda torch, xs, c: torch.log(xs[0])),
'''
TEST_LOG = '''

# log: the slope is 1/x ----------------------------------------------------------------

def test_log_computes_ln_x_and_its_slope_is_one_over_x(engine):
    x0, up = 1.5, -2.0
    x = engine.Value(x0)
    out = x.log()
    expect_unary_node(engine, out, x, "log", f"Value({x0}).log()")
    expect.equal(out.data, math.log(x0), f"Value({x0}).log().data", t("s4.value_is", op="log", fn="math.log(x)"))
    one_step(out, up)
    grads(t("s4.log.rule"), [(FORGOT_UPSTREAM, {"x": 1 / x0})], x=(x, up / x0))
'''
MISTAKE_LOG = '''\
    Mistake("log-rule-assigns", "log-assigns", "assigns (=) in the log rule",
            "self.grad += out.grad / self.data   # the slope of ln x is 1/x  # STUB:",
            "self.grad = out.grad / self.data   # the slope of ln x is 1/x  # STUB:"),
'''
CATALOGUE = {
    "en": ('msgid "s4.log.rule"\nmsgstr "log\'s slope is 1/x, times out.grad"\n\n'
           'msgid "mistake.log-assigns"\nmsgstr "assigns (=) in the log rule"\n'),
    "ja": ('msgid "s4.log.rule"\nmsgstr "log の傾きは 1/x です。それに out.grad を掛けます"\n\n'
           'msgid "mistake.log-assigns"\nmsgstr "log の規則で代入（=）している"\n'),
}
HINTS = {  # (before this line, level 2's line), (before this line, level 3's lines)
    "en": (("- `__pow__(exponent)`",
            "- `log`: value `math.log(...)`, label `'log'`; the slope is `1 / x`, x the input.\n"),
           ("x ** n:", "log:   out <- Value(ln of data, parent self, 'log')\n"
                       "       backward: self.grad <- out.grad / data\n")),
    "ja": (("- `__pow__(exponent)`", "- `log`: 値は `math.log(...)`、ラベルは `'log'`。傾きは入力 x の `1 / x`。\n"),
           ("x ** n:", "log:   out <- Value(data の自然対数, 親 self, 'log')\n"
                       "       backward: self.grad <- out.grad / data\n")),
}


def edit(path: Path, old: str, new: str) -> None:
    """Replace ``old``, found exactly once, in the scratch file ``path``."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the recipe's anchor {old!r} is in {path.name} {text.count(old)} times, not once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def before(path: Path, anchor: str, insert: str) -> None:
    edit(path, anchor, insert + anchor)


def follow_the_recipe(root: Path) -> None:
    """README's "Adding an operation", step by step, for log() in stage 4."""
    # the table entry
    before(root / "autograd_kata/core/operations.py", '    Operation("pow", 4, 1,', TABLE_LOG)
    # 1. the code in its stage's range, a rule that adds (+=) and reads `=` before stage 6; the docstring
    before(root / "reference/engine.py", "    def __pow__(self, exponent):", ENGINE_LOG)
    edit(root / "reference/engine.py", "You write: Value.tanh, exp, relu,", "You write: Value.tanh, exp, relu, log,")
    # 2. a test of its value and slope, its messages in every catalogue
    test_file = root / stage(4).test_file
    before(test_file, "\n\n# relu: slope 1 above 0", TEST_LOG)
    for lang, block in CATALOGUE.items():
        po = root / f"autograd_kata/locales/{lang}/stage04.po"
        po.write_text(po.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + block, encoding="utf-8")
    # 3. both hint files, levels 2 and 3
    for lang, lines in HINTS.items():
        for anchor, line in lines:
            before(root / stage(4).hint_file(lang), anchor, line)
    # 4. a rule's mistake: the rule with = (the label went in with the catalogue entries)
    before(root / "autograd_kata/maintainer/mistakes.py", '    Mistake("pow-rule-assigns", "pow-assigns",', MISTAKE_LOG)
    # 5. README: the stage table names it
    edit(root / "README.md", "| `tanh`, `exp`, `relu`, `**`, `/` |", "| `tanh`, `exp`, `relu`, `log`, `**`, `/` |")
    # and the generated modules
    built = run([sys.executable, "-m", "autograd_kata", "build"], root, timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr


def test_the_recipe_for_adding_an_operation_is_complete():
    """Every step the recipe test takes is one README names (so the two cannot drift apart)."""
    readme = (ROOT / "docs" / "maintainers.md").read_text(encoding="utf-8")
    recipe = readme[readme.index("## Adding an operation\n"):]
    recipe = recipe[:recipe.index("\n## ", 1)]
    for named in ("autograd_kata/core/operations.py", "reference/engine.py", "# BEGIN SOLUTION", "# before 6:",
                  "kata build", "tests/test_stageNN_", "autograd_kata/locales/*/stageNN.po", "hints/en", "hints/ja",
                  "-rule-assigns", "autograd_kata/maintainer/mistakes.py", "mistake.<name>-assigns",
                  "stage table", "tooltests/test_operations.py"):
        assert named in recipe, f"README's recipe 'Adding an operation' does not name {named!r}, a step this test takes"


@pytest.mark.timeout(240)
def test_adding_log_to_stage_4_by_the_recipe(tmp_path):
    root = working_tree(tmp_path / "kata")
    follow_the_recipe(root)
    env = {"PYTHONPATH": str(root)}  # the scratch copy's package, not the installed one

    def pytest_in_copy(*args, timeout=180):
        done = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                   root, env=env, timeout=timeout)
        return done, done.stdout + done.stderr

    # the stage tests, the property tests too (log among the random graphs' ops from stage 4 on,
    # among stage 6's rules), with stage 4's new test among them
    done, out = pytest_in_copy("--impl", "solutions", "-m", "properties or not properties", "-vv",
                               stage(4).test_file, stage(6).test_file)
    assert done.returncode == 0, out[-4000:]
    assert re.search(r"test_log_computes_ln_x_and_its_slope_is_one_over_x\S* PASSED", out), out[-3000:]
    probe = run([sys.executable, "-c", "import graphs, test_stage06_accumulate as s6; "
                 "print('log' in graphs.ops_up_to(4), 'log' in s6.PROBES)"],
                root / "tests", env={"PYTHONPATH": f"{root}{os.pathsep}{root / 'tests'}"})
    assert probe.stdout.split() == ["True", "True"], probe.stdout + probe.stderr

    # stage 4's stub of log raises, so the learner's run fails on it
    stub = (root / stage(4).source("exercises")).read_text(encoding="utf-8")
    assert 'raise NotImplementedError("stage 4' in stub.split("def log(self):")[-1][:400], stub[-3000:]

    # the picture tool draws it
    drawn = run([sys.executable, "-m", "autograd_kata", "graph", "--expr", "a.log()", "--impl", "solutions",
                 "--out", str(tmp_path / "g.txt")], root, env=env, timeout=60)
    assert drawn.returncode == 0, drawn.stdout + drawn.stderr
    assert "[log]" in (tmp_path / "g.txt").read_text(encoding="utf-8")

    # the table's readers among the tool tests, in one run: the table's truth for log, the rule
    # count and the generated trees, stage 6's contract, the mistake made and named, both mistake
    # lists, README's counts, both catalogues, PyTorch parity
    readers = {
        "tooltests/test_operations.py": "log and not adding_log or method or picture_tool",
        "tooltests/test_build.py": "stages_2_to_5_assign or committed_trees_are",
        "tooltests/test_contracts.py": "every_rule_assigning or every_clause",
        "tooltests/test_mistakes.py": "fails_its_stage_and_is_named and log",
        "tooltests/test_classroom.py": "class_phrases_are_the_catalogues",
        "tooltests/test_readme_counts.py": "no_count or stage_table",
        "tooltests/test_i18n.py": "every_id_is_translated or japanese_in_japanese_and_english_in_english and log",
        "tooltests/test_pytorch_parity.py": "each_op and log",
    }
    done, out = pytest_in_copy(*readers, "-vv", "-k", " or ".join(f"({k})" for k in readers.values()))
    assert done.returncode == 0, out[-4000:]
    wanted = [r"test_each_derivative_is_the_slope_of_its_forward\[log-0\] PASSED",
              r"test_the_reference_engine_agrees_with_the_table\[log-0\] PASSED",
              r"test_stages_2_to_5_assign_and_stage_6_on_accumulate PASSED",
              r"test_every_rule_assigning_is_a_mistake PASSED",
              r"test_the_mistake_fails_its_stage_and_is_named\[log-rule-assigns\] PASSED",
              r"test_the_stage_table_names_every_method_the_stage_adds\[stage04_tanh\] PASSED",
              r"test_each_message_is_japanese_in_japanese_and_english_in_english\[s4.log.rule\] PASSED"]
    if importlib.util.find_spec("torch") is not None:
        wanted.append(r"test_each_op_and_its_gradient_match_pytorch\[[^\]]*log-0[^\]]*\] PASSED")
    for case in wanted:
        assert re.search(case, out), f"no {case!r} among the readers' cases:\n{out[-3000:]}"
