"""The judge decides, the sandbox observes: no verdict rests on the sandbox's word.

Under grading, an ``@in_engine`` function runs in the process the submission
owns, so whatever it returns is the submission's to say.  The mechanism
(``tests/expect.py``):

* a **builder** (``@in_engine``) returns engine objects only (handles, when
  grading) or None; ``Builder`` refuses a number, a string or a bool anywhere in
  its result, here and in the sandbox alike.  Every value a test compares, the
  test reads from those objects itself, after its own calls;
* a **witness** (``@in_engine.witness``) returns what the sandbox says about
  itself.  Only a test marked ``advisory`` (reported, worth no points under
  grading) may read one, or a *guard*: a function that returns nothing, so a
  witness can make it fail a test and never pass one.

This file checks both rules on every stage test file, and that
docs/instructors.md names every advisory test.
"""
from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from expect import in_engine  # noqa: E402 - the stage tests' own helpers, by path as they import them

TEST_FILES = sorted((ROOT / "tests").glob("test_stage*.py"))


def decorator_names(node) -> list[str]:
    return [ast.unparse(d) for d in node.decorator_list]


def functions(tree) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def calls_in(fn: ast.FunctionDef) -> set[str]:
    return {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def returns_a_value(fn: ast.FunctionDef) -> bool:
    """Whether ``fn`` itself (not a function defined inside it) returns or yields a value."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None or isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def is_advisory(fn: ast.FunctionDef) -> bool:
    return "pytest.mark.advisory" in decorator_names(fn)


def unguarded_reads(tree) -> list[str]:
    """Each path by which a witness's word reaches a test that is not advisory: ``caller <- ... <- witness``."""
    defs = functions(tree)
    witnesses = [name for name, fn in defs.items() if "in_engine.witness" in decorator_names(fn)]
    bad, todo = [], [(w, [w]) for w in witnesses]
    while todo:
        carrier, path = todo.pop()
        for name, fn in defs.items():
            if carrier not in calls_in(fn) or name in path:
                continue
            if is_advisory(fn):
                continue  # read by an advisory test: reported, worth no points under grading
            if name.startswith("test_"):
                bad.append(" <- ".join([name, *reversed(path)]))
            elif returns_a_value(fn):
                todo.append((name, [*path, name]))  # a helper handing the word on: follow its callers
            # else a guard: the word can make it fail a test, never pass one
    return bad


@pytest.mark.parametrize("path", TEST_FILES, ids=[p.stem for p in TEST_FILES])
def test_a_witness_is_read_only_by_advisory_tests_and_guards(path):
    bad = unguarded_reads(ast.parse(path.read_text(encoding="utf-8")))
    assert not bad, (f"{path.name}: a witness (@in_engine.witness: the sandbox's own word) reaches a scored "
                     f"test: {bad}; mark the test @pytest.mark.advisory, or read it in a guard that returns "
                     f"nothing, or make the test read engine objects itself (tests/expect.py)")


def test_the_rule_finds_a_witness_handed_on_by_a_helper():
    tree = ast.parse('''
@in_engine.witness
def said(engine):
    return 1
def helper(engine):
    return said(engine) + 1
def guard(engine):
    if said(engine) != 1:
        fail()
def test_scored(engine):
    assert helper(engine) == 2
def test_guarded(engine):
    guard(engine)
@pytest.mark.advisory
def test_advisory(engine):
    assert said(engine) == 1
''')
    assert unguarded_reads(tree) == ["test_scored <- helper <- said"]


def test_the_stage_tests_use_both_kinds():
    """The rule is not vacuous: the stage tests have builders, witnesses and advisory tests."""
    kinds = {"in_engine": 0, "in_engine.witness": 0, "pytest.mark.advisory": 0}
    for path in TEST_FILES:
        for fn in functions(ast.parse(path.read_text(encoding="utf-8"))).values():
            for name in decorator_names(fn):
                if name in kinds:
                    kinds[name] += 1
    assert all(kinds.values()), kinds


def advisory_tests() -> list[str]:
    return [name for path in TEST_FILES for name, fn in functions(ast.parse(path.read_text(encoding="utf-8"))).items()
            if name.startswith("test_") and is_advisory(fn)]


def test_the_instructors_guide_names_every_advisory_test():
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    missing = [name for name in advisory_tests() if f"`{name}`" not in guide]
    assert not missing, f"docs/instructors.md does not say these tests are advisory, and why: {missing}"


# --- the builder's check, at run time ------------------------------------------------------

class Thing:
    pass


ENGINE = types.SimpleNamespace(Thing=Thing)


@in_engine
def builds(engine, n):
    return [engine.Thing() for _ in range(n)]


@in_engine
def says(engine, what):
    return what


@in_engine.witness
def witnesses(engine, what):
    return what


def test_a_builder_returns_objects_and_nothing_a_sandbox_could_simply_say():
    assert [type(x) for x in builds(ENGINE, 2)] == [Thing, Thing]
    assert says(ENGINE, None) is None  # nothing at all: an action
    for data in (1, 0.5, True, "passed", [Thing(), 1.0], {"ok": Thing()}, (Thing(), (None,))):
        with pytest.raises(TypeError, match="a builder returns engine objects only"):
            says(ENGINE, data)
    assert witnesses(ENGINE, {"limit": 1000}) == {"limit": 1000}  # a witness says what it saw
