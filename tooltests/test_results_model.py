"""One results model (``core/results/model.py``): one place reads the results file's entries,
no reader derives a failure's kind from its words, and every reader gets the same facts.

The checks read the package's source (like ``test_imports.py``): a new module that
picks an entry's fields itself, or that tells a kind of failure by the words of its
message, fails here with its name.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from autograd_kata.classroom.grading.report import StageGrade, fill
from autograd_kata.core import runner, state
from autograd_kata.core.i18n import t
from autograd_kata.core.manifest import stage
from autograd_kata.core.results.model import TestResult

PACKAGE = Path(__file__).resolve().parent.parent / "autograd_kata"
WRITER, MODEL = "core/results/channel.py", "core/results/model.py"
# the fields of a results entry that only the model reads (core/results/channel.py writes them;
# "mistakes" and "kind" are left out: the class records have fields of those names too)
ENTRY_FIELDS = {"outcome", "said", "where", "duration", "called"}
# the modules that write failure messages, and so may say a kind's catalogue prefix
MESSAGE_WRITERS = {"core/explain.py", "core/results/verdicts.py", "core/runner.py"}


def sources():
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" not in path.parts and "templates" not in path.parts:
            yield path.relative_to(PACKAGE).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _key(node) -> str | None:
    """The constant key of ``x["k"]`` or ``x.get("k")``, else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value if isinstance(node.slice.value, str) else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return node.args[0].value
    return None


def test_only_the_model_reads_a_results_entrys_fields():
    found = [f"{name}:{node.lineno} reads {key!r}" for name, tree in sources() if name not in (WRITER, MODEL)
             for node in ast.walk(tree) if (key := _key(node)) in ENTRY_FIELDS]
    assert not found, ("a results entry is read by core/results/model.py's TestResult.from_entry only; "
                       "build a TestResult from it instead:\n" + "\n".join(found))


def test_the_field_check_sees_both_ways_of_reading_a_field():
    reads = [_key(node) for node in ast.walk(ast.parse('entry.get("outcome"); entry["said"]; entry.get(k)'))]
    assert {"outcome", "said"} <= set(reads) and None in reads


def test_one_function_opens_the_results_file():
    opened = [f"{name}:{node.lineno}" for name, tree in sources() for node in ast.walk(tree)
              if isinstance(node, ast.FunctionDef) and node.name != "read_results"
              and any(isinstance(c, ast.Constant) and c.value == "results.json" for c in ast.walk(node))
              and any(isinstance(c, ast.Attribute) and c.attr in ("loads", "load", "read_text")
                      for c in ast.walk(node))]
    assert not opened, "only core/runner.read_results opens results.json:\n" + "\n".join(opened)


def test_no_reader_tells_a_kind_by_its_words():
    """A kind's catalogue prefix (``check.unwritten.prefix``, ``hang.prefix``, ...) is said by
    the modules that write the messages; a reader that looked for it in a message would
    be parsing prose, in whatever language the run spoke."""
    found = [f"{name}:{node.lineno} says {node.args[0].value!r}" for name, tree in sources()
             if name not in MESSAGE_WRITERS for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in ("t", "t_in")
             and node.args and isinstance(node.args[-1 if getattr(node.func, "id", "") == "t_in" else 0], ast.Constant)
             and str(node.args[-1 if getattr(node.func, "id", "") == "t_in" else 0].value).endswith(".prefix")]
    assert not found, "a failure's kind is data (results 'kind'), never found in its words:\n" + "\n".join(found)


ENTRY = {"nodeid": "tests/test_stage05_backward.py::test_x[stage05_backward]", "name": "test_x[stage05_backward]",
         "stage": 5, "outcome": "failed", "kind": "crash", "message": "crashed: KeyError: 'boom'",
         "said": [{"id": "crash.prefix", "args": {}}], "mistakes": ["order-skips-leaves"],
         "where": ["exercises/stage05_backward.py", 42], "location": ["tests/test_stage05_backward.py", 3],
         "duration": 0.25}


def test_the_learners_runner_its_cache_and_the_grader_read_the_same_facts(tmp_path):
    learner = runner.parse_results({"exitstatus": 1, "collected": 1, "tests": [ENTRY]}, "exercises",
                                   [stage(5)])[5].tests[0]
    grade = StageGrade(stage(5))
    fill(grade, [ENTRY["nodeid"]], {ENTRY["nodeid"]: ENTRY})
    cached = TestResult.from_entry(json.loads(json.dumps(learner.to_entry())))
    for got in (learner, grade.tests[0], cached):
        assert (got.name, got.short, got.status, got.kind, got.mistakes, got.mistake, got.where, got.said,
                got.message, got.seconds) == (
            ENTRY["nodeid"], ENTRY["name"], "failed", "crash", ("order-skips-leaves",), "order-skips-leaves",
            ("exercises/stage05_backward.py", 42), ENTRY["said"], ENTRY["message"], 0.25), got


@pytest.mark.parametrize("broken, status, kind", [
    ({"outcome": "passed!"}, "error", "crash"),        # an outcome it does not know is no pass
    ({"kind": "fine"}, "failed", "other"),             # nor is a kind it does not know a kind
    ({"outcome": "skipped", "kind": None}, "skipped", "not run"),
    ({"mistakes": "order-skips-leaves"}, "failed", "crash"),  # a string is not a list of ids
])
def test_a_malformed_entry_fails_closed(broken, status, kind):
    got = TestResult.from_entry({**ENTRY, **broken})
    assert (got.status, got.kind) == (status, kind), got
    assert got.mistakes == (() if "mistakes" in broken else ("order-skips-leaves",)), got


def test_the_grader_counts_an_unknown_outcome_as_not_run():
    grade = StageGrade(stage(5))
    fill(grade, [ENTRY["nodeid"], "tests/test_stage05_backward.py::test_gone"],
         {ENTRY["nodeid"]: {**ENTRY, "outcome": 1}})
    assert [t.status for t in grade.tests] == ["missing", "missing"] and not grade.ok


def test_a_stage_without_its_test_file_is_known_as_such_from_the_cache_too(tmp_path):
    """``tests_missing`` is a kind of problem, kept as data in the cache, never told by its words:
    read back, its words are said afresh from the kind (in the learner's language), not stored."""
    def run(impl, stages, root):
        return {s.number: runner.StageResult(s, impl, problem="any words", problem_kind="missing") for s in stages}
    first = state.cached_results([stage(1)], tmp_path, run=run)[1]
    again = state.known_results([stage(1)], tmp_path)[1]
    assert first.tests_missing and again.tests_missing
    assert again.problem == t("runner.tests_missing", file=stage(1).test_file) != "any words"
    assert not runner.StageResult(stage(1), "exercises", problem="any words").tests_missing
