"""Every clause of every stage's contract is tested: its smallest wrong implementation fails, by name.

Each stage test module's docstring states the stage's contract as named clauses
(``- [name] what holds``).  For every clause, the last section of reference/engine.py ("Each
stage's contract, broken clause by clause", maintainers' notes that no generated module holds;
autograd_kata/maintainer/contracts.py reads them) names one or more smallest wrong
implementations of it: an entry of the classic-mistake catalogue
(autograd_kata/maintainer/mistakes.py, checked by test_mistakes.py), or an edit
of the reference, whole lines.  Each edit is made in a scratch copy of the kata
(as test_mistakes.py does), the stage's tests run against it as a learner's
``exercises/`` module, and the stage must fail with the clause's words in its
output.  The notes' other right ways (``RIGHT``) change how the reference does something,
not what it does: the stage must pass them (the tests judge effects, not calls).  Two kinds
of entry are made here, from tables, rather than noted: stage 6's [rules-add] (every rule of
the operations table, assigning) and ``reflected_ops_aliased`` for every stage from 3 on.
"""
from __future__ import annotations

import ast
import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_mistakes import ROOT, blame_report, mistaken_source, right_pieces_blamed, run_stage_with

from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.operations import rules
from autograd_kata.maintainer.contracts import ENGINE, HEADING, Edit, misplaced, read_engine
from autograd_kata.maintainer.mistakes import MISTAKES

CATALOGUE = {m.id for m in MISTAKES}
NOTES = read_engine(ROOT)

#: (stage, clause name) -> the smallest wrong implementations: catalogue ids or Edits.  A clause is
#: known by the name its docstring gives it (``- [name] ...``), so a clause added before it renames
#: nothing.  Stage 6's [rules-add] is every rule of the operations table, assigning (=), made from
#: the table (test_every_rule_assigning_is_a_mistake): a new rule's mistake needs no note.
CLAUSES: dict[tuple[int, str], list] = {
    **NOTES.clauses,
    (6, "rules-add"): [f"{op.name}-rule-assigns" for op in rules()] + NOTES.clauses.get((6, "rules-add"), []),
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
RIGHT = [*(reflected_ops_aliased(s.number) for s in STAGES if s.number >= 3), *NOTES.right]

EDITS = [e for entries in CLAUSES.values() for e in entries if isinstance(e, Edit)]


#: a clause of a stage's contract, in its test module's docstring: ``- [name] what holds``
CLAUSE = re.compile(r"^- \[([a-z0-9-]+)\] ", flags=re.MULTILINE)


def clauses_of(number: int) -> list[str]:
    """The clause names in the docstring of stage ``number``'s test module, in order."""
    path = ROOT / stage(number).test_file
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return CLAUSE.findall(doc)


def misplaced_in_its_module(edit: Edit) -> str:
    """Why ``edit`` cannot be made in its stage's solutions module ("" when it can)."""
    module = stage(edit.stage).source("solutions")
    return misplaced(edit, (ROOT / module).read_text(encoding="utf-8"), module)


def the_module_with(edit: Edit) -> str:
    """The stage's solutions module with ``edit`` made; a note whose `-` lines the module does not
    hold once, as whole lines, fails saying which note and what to do."""
    trouble = misplaced_in_its_module(edit)
    if trouble:
        pytest.fail(trouble, pytrace=False)
    return mistaken_source(edit)


def test_every_clause_of_every_stage_has_a_smallest_wrong_implementation():
    where = f"the section {HEADING!r} at the end of {ENGINE}"
    for s in STAGES:
        names = clauses_of(s.number)
        assert names, f"{s.test_file}: its docstring states no contract clauses ('- [name] what holds')"
        assert len(set(names)) == len(names), f"{s.test_file}: a clause name is given twice: {names}"
        for name in names:
            assert CLAUSES.get((s.number, name)), (
                f"stage {s.number}'s clause [{name}] ({s.test_file}) has no smallest wrong implementation: "
                f"add a note to stage {s.number}'s block of {where}, '## stage {s.number} contract, [{name}]: "
                f"<mistake id> (a catalogue mistake)' or an edit that breaks it, '## stage {s.number} contract, "
                f"[{name}] <id>: what the wrong code does' with its says:, - and + lines")
    stated = {(s.number, name) for s in STAGES for name in clauses_of(s.number)}
    unstated = {key: NOTES.lines.get(key, 0) for key in sorted(set(CLAUSES) - stated)}
    assert not unstated, (f"{where} breaks clauses no stage's docstring states (stage, clause: its note's "
                          f"line): {unstated}; name them as the docstring does, or state the clause there")
    for (number, name), entries in CLAUSES.items():
        for entry in entries:
            assert isinstance(entry, Edit) or entry in CATALOGUE, (
                f"{ENGINE}:{NOTES.lines.get((number, name), 0)}: stage {number} [{name}] names {entry!r}, "
                "no mistake of autograd_kata/maintainer/mistakes.py: give a catalogued id, or write the "
                "wrong code as an edit")
    ids = [e.id for e in EDITS + RIGHT]
    assert len(set(ids)) == len(ids), f"an edit's id is given twice (each is a test's id): {sorted(ids)}"
    misplaced_notes = [trouble for trouble in map(misplaced_in_its_module, EDITS + RIGHT) if trouble]
    assert not misplaced_notes, "\n\n".join(misplaced_notes)


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
    the_module_with(edit)
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
    source = the_module_with(edit)
    _, output = outcome(edit, runs)
    blamed = right_pieces_blamed(edit.stage, source, output, edit.phrase)
    assert not blamed, blame_report(f"stage {edit.stage} with {edit.says}", blamed, output)


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("edit", RIGHT, ids=[e.id for e in RIGHT])
def test_another_right_way_passes(edit, runs):
    the_module_with(edit)
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
