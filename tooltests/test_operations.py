"""The operations table (autograd_kata/core/operations.py) tells the truth, and the
recipe "Adding an operation" (docs/maintainers.md) works: followed in a scratch copy with
``log()``, editing only the row and the engine (HAND_EDITED, checked against every file
the copy changed), every reader of the table picks the new op up: its default value and
slope test in its stage, the random graphs, stage 6's rule probe, contract and generated
'assigns' mistake with its label, kata graph, PyTorch parity, the rule count of test_build."""
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


def test_the_slope_explorer_draws_the_tables_rows_that_say_how():
    """Its functions are the rows with an Explore entry, in table order, then sigmoid (no op of the
    engine); each is offered in the page with its curve, and explained from the catalogue."""
    from autograd_kata.core.operations import explored
    from autograd_kata.pictures import explore
    assert explore.FUNCTIONS == (*(op.name for op in explored()), "sigmoid")
    assert all(op.arity == 1 and op.method for op in explored()), "the explorer draws one-operand methods"
    for lang in ("en", "ja"):
        page = explore.page(explored()[0].name, 0.5, lang)
        for name in explore.FUNCTIONS:
            assert f'<option value="{name}">' in page and f'"{name}": {{ title: "out = {name}(x)"' in page, name
        assert "KATA_FUNCTIONS*/{}" not in page and "<!--KATA_OPTIONS-->" not in page


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
              twin=lambda torch, xs, c: torch.log(xs[0]),
              explore=Explore("Math.log(x)", "1 / Math.exp(t)", '"1 / e^t = " + f4(s)', "true",
                              (0.05, 3), (-3, 1.2), (0, 20))),
'''
#: the files a maintainer edits by hand to add an operation (the recipe's goal: at most 2)
HAND_EDITED = ("autograd_kata/core/operations.py", "reference/engine.py")


def edit(path: Path, old: str, new: str) -> None:
    """Replace ``old``, found exactly once, in the scratch file ``path``."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the recipe's anchor {old!r} is in {path.name} {text.count(old)} times, not once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def before(path: Path, anchor: str, insert: str) -> None:
    edit(path, anchor, insert + anchor)


def follow_the_recipe(root: Path) -> list[str]:
    """docs/maintainers.md's "Adding an operation", step by step, for log() in stage 4; the
    files it edited by hand (``kata build`` writes the rest)."""
    # 1. the row
    before(root / HAND_EDITED[0], '    Operation("pow", 4, 1,', TABLE_LOG)
    # 2. the code in its stage's range, a rule that adds (+=) and reads `=` before stage 6; the docstring
    before(root / HAND_EDITED[1], "    def __pow__(self, exponent):", ENGINE_LOG)
    edit(root / HAND_EDITED[1], "You write: Value.tanh, exp, relu,", "You write: Value.tanh, exp, relu, log,")
    # and the generated modules
    built = run([sys.executable, "-m", "autograd_kata", "build"], root, timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr
    return list(HAND_EDITED)


def changed_files(root: Path) -> list[str]:
    """The files of the scratch copy that differ from the working tree's, but what kata build wrote."""
    changed = []
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if (not path.is_file() or "__pycache__" in path.parts or name.startswith((".kata/", "solutions/", "exercises/"))
                or ".pytest_cache" in path.parts):
            continue
        if not (ROOT / name).is_file() or (ROOT / name).read_bytes() != path.read_bytes():
            changed.append(name)
    return changed


def test_the_recipe_for_adding_an_operation_is_complete():
    """Every step the recipe test takes is one README names (so the two cannot drift apart)."""
    readme = (ROOT / "docs" / "maintainers.md").read_text(encoding="utf-8")
    recipe = readme[readme.index("## Adding an operation\n"):]
    recipe = recipe[:recipe.index("\n## ", 1)]
    for named in (*HAND_EDITED, "# BEGIN SOLUTION", "# before 6:", "You write:", "kata build",
                  "tooltests/test_operations.py"):
        assert named in recipe, f"README's recipe 'Adding an operation' does not name {named!r}, a step this test takes"


@pytest.mark.timeout(240)
def test_adding_log_to_stage_4_by_the_recipe(tmp_path):
    root = working_tree(tmp_path / "kata")
    edited = follow_the_recipe(root)
    assert len(edited) <= 2, f"adding an operation takes {len(edited)} hand-edited files: {edited}"
    assert changed_files(root) == sorted(edited), \
        f"the recipe changed {changed_files(root)}, it names {sorted(edited)} (kata build writes the generated trees)"
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
    assert re.search(r"test_each_method_of_the_stage_computes_its_value_and_slope\[stage04_tanh-log\] PASSED", out), \
        out[-3000:]
    probe = run([sys.executable, "-c", "import graphs, test_stage06_accumulate as s6; "
                 "print('log' in graphs.ops_up_to(4), 'log' in s6.PROBES)"],
                root / "tests", env={"PYTHONPATH": f"{root}{os.pathsep}{root / 'tests'}"})
    assert probe.stdout.split() == ["True", "True"], probe.stdout + probe.stderr

    # stage 4's stub of log raises, so the learner's run fails on it
    stub = (root / stage(4).source("exercises")).read_text(encoding="utf-8")
    assert 'raise NotImplementedError("stage 4' in stub.split("def log(self):")[-1][:400], stub[-3000:]

    # the slope explorer offers it, explained in the words every function shares
    page = run([sys.executable, "-c", "from autograd_kata.pictures import explore; p = explore.page('log', 1.0, 'en'); "
                "print('log' in explore.FUNCTIONS, '<option value=\"log\">' in p, explore.explain_id('log'))"],
               root, env=env)
    assert page.stdout.split() == ["True", "True", "explore.explain.any"], page.stdout + page.stderr

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
        "tooltests/test_mistake_table.py": "label or made",
        "tooltests/test_readme_counts.py": "no_count or lists_every_method",
        "tooltests/test_i18n.py": "every_id_is_translated",
        "tooltests/test_pytorch_parity.py": "each_op and log",
    }
    done, out = pytest_in_copy(*readers, "-vv", "-k", " or ".join(f"({k})" for k in readers.values()))
    assert done.returncode == 0, out[-4000:]
    wanted = [r"test_each_derivative_is_the_slope_of_its_forward\[log-0\] PASSED",
              r"test_the_reference_engine_agrees_with_the_table\[log-0\] PASSED",
              r"test_stages_2_to_5_assign_and_stage_6_on_accumulate PASSED",
              r"test_every_rule_assigning_is_a_mistake PASSED",
              r"test_the_mistake_fails_its_stage_and_is_named\[log-rule-assigns\] PASSED",
              r"test_every_row_has_its_label_in_every_language\[ja\] PASSED",
              r"test_each_stage_module_lists_every_method_of_the_table_it_adds PASSED"]
    if importlib.util.find_spec("torch") is not None:
        wanted.append(r"test_each_op_and_its_gradient_match_pytorch\[[^\]]*log-0[^\]]*\] PASSED")
    for case in wanted:
        assert re.search(case, out), f"no {case!r} among the readers' cases:\n{out[-3000:]}"
