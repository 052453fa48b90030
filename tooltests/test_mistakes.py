"""The classic-mistake catalogue (autograd_kata/maintainer/mistakes.py): each mistake fails its stage, by name.

For every entry, the reference module of its stage gets the mistake (``old``
-> ``new``, which must match exactly once) and becomes a learner's
``exercises/`` module in a scratch copy of the kata; that stage's tests run
against it in a fresh pytest, as ``pytest tests/test_stageNN_*.py`` would for
the learner.  The stage must fail, and its output must contain the entry's
phrase: the tests do not just notice the mistake, they name it.

The pytest runs are started together, two at a time per core, on the first
test that needs them; each test then reads its own result.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from test_i18n_stage_messages import clean_env, prose_trouble
from test_verdicts import CASES as VERDICTS
from test_verdicts import edited, plain_pytest_fails_with_the_same_message

from autograd_kata.core.build import strip_markers
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.maintainer.mistakes import MISTAKES

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120


def test_the_catalogue_is_big_and_well_formed():
    ids = [m.id for m in MISTAKES]
    assert len(ids) >= 25, f"only {len(ids)} mistakes catalogued"
    assert len(set(ids)) == len(ids), "mistake ids must be unique"
    assert {m.stage for m in MISTAKES} == {s.number for s in STAGES}, \
        "every stage has at least one catalogued mistake"
    for m in MISTAKES:
        assert m.old != m.new and m.phrase.strip() and m.says.strip(), m.id


def mistaken_source(mistake) -> str:
    """The reference module of the mistake's stage, with the mistake made."""
    path = ROOT / stage(mistake.stage).source("solutions")
    source = path.read_text(encoding="utf-8")
    found = source.count(mistake.old)
    if found != 1:
        pytest.fail(f"mistake {mistake.id!r}: its `old` text occurs {found} times in {path.relative_to(ROOT)}, "
                    "expected exactly once; update autograd_kata/maintainer/mistakes.py to the reference "
                    f"as it is now:\n{mistake.old}")
    return source.replace(mistake.old, mistake.new)


def run_stage_with(mistake, where: Path, *extra: str, env_extra=None) -> subprocess.CompletedProcess:
    """A scratch kata in ``where`` whose exercises/ module of the stage holds the mistake;
    run that stage's tests against it (with ``extra`` pytest arguments, ``env_extra`` variables)."""
    s = stage(mistake.stage)
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, where / name)
    shutil.copytree(ROOT / "tests", where / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (where / "exercises").mkdir()
    (where / "exercises" / "__init__.py").write_text("", encoding="utf-8")
    (where / s.source("exercises")).write_text(mistaken_source(mistake), encoding="utf-8")
    # in English whatever the caller's language (the phrases are English), as test_i18n_stage_messages' runs
    env = clean_env(KATA_LANG="en", PYTHONIOENCODING="utf-8", **(env_extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "pytest", s.test_file, "--impl", "exercises", "-q", "-rf", "--no-header",
         "-p", "no:cacheprovider", *extra],
        cwd=where, env=env, capture_output=True, text=True, encoding="utf-8", timeout=TIMEOUT, check=False)


@pytest.fixture(scope="session")
def outcomes(request, tmp_path_factory):
    """Every selected mistake's stage run, started together; {id: CompletedProcess or error}.
    One run per mistake, however many of this file's tests read it (three do: each mistake was
    once run three times over, 128 of the file's 192 runs wasted)."""
    by_id = {m.id: m for m in MISTAKES}
    params = [item.callspec.params for item in request.session.items
              if item.path == Path(__file__).resolve() and hasattr(item, "callspec")]
    chosen = list({m.id: m for m in [p["mistake"] for p in params if "mistake" in p]
                   + [by_id[p["verdict"].twin] for p in params if "verdict" in p]}.values())

    places = [tmp_path_factory.mktemp(m.id) for m in chosen]  # here, not in threads: mktemp is not thread-safe

    def one(mistake, where):
        try:  # with every test's outcome as data too (results.json), for the class summary's test
            return run_stage_with(mistake, where, "-p", "autograd_kata.core.results.channel",
                                  f"--kata-results={where / 'results.json'}")
        except BaseException as error:  # noqa: BLE001 - reported by the mistake's own test
            return error

    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        return dict(zip((m.id for m in chosen), pool.map(one, chosen, places), strict=True))


@pytest.mark.timeout(1200)  # the first test waits for every stage run (the shared fixture)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_the_mistake_fails_its_stage_and_is_named(mistake, outcomes):
    done = outcomes[mistake.id]
    if isinstance(done, BaseException):
        raise done
    output = done.stdout + done.stderr
    where = f"stage {mistake.stage} ({stage(mistake.stage).test_file}) with the mistake: {mistake.says}"
    assert done.returncode == 1, (f"{where}: pytest exited {done.returncode}, expected 1 (tests failed)\n"
                                  f"{output[-3000:]}")
    assert mistake.phrase in output, (f"{where}: the stage fails, but its output never says {mistake.phrase!r}\n"
                                      f"{output[-3000:]}")


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_the_first_failure_shown_names_the_mistake(mistake, outcomes):
    """The cause first: ``kata check`` shows one failure in full, the one that explains the most
    (learner.feedback.ordered_failures, from the same results file the learner's run reads);
    that one must name the mistake, not a crash or an echo that follows from it."""
    from autograd_kata.core.runner import parse_results, read_results
    from autograd_kata.learner.feedback import ordered_failures

    done = outcomes[mistake.id]
    if isinstance(done, BaseException):
        raise done
    results = Path(next(a for a in done.args if a.startswith("--kata-results=")).split("=", 1)[1])
    s = stage(mistake.stage)
    result = parse_results(read_results(results), "exercises", [s])[s.number]
    first = ordered_failures(result)[0]
    assert mistake.phrase in first.message, (
        f"stage {mistake.stage} with the mistake {mistake.id!r} ({mistake.says}): the first failure kata check "
        f"shows is {first.short} ({first.kind}), which does not say {mistake.phrase!r}:\n{first.message[:1500]}")


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_every_failure_line_of_the_mistake_is_in_english(mistake, outcomes):
    """test_i18n_stage_messages.py's English half for every catalogued mistake, read from the
    run above (KATA_LANG=en, no locale): each failure's message is what the terminal showed and
    has no Japanese in it. (That file runs its mistakes in Japanese only: the English run would
    be this one again.)"""
    done = outcomes[mistake.id]
    if isinstance(done, BaseException):
        raise done
    results = Path(next(a for a in done.args if a.startswith("--kata-results=")).split("=", 1)[1])
    failed = [t for t in json.loads(results.read_text(encoding="utf-8"))["tests"]
              if t["outcome"] in ("failed", "error")]
    assert failed, f"{mistake.id}: the stage passed; a classic mistake must fail it"
    terminal, trouble = done.stdout + done.stderr, []
    for test in failed:
        first = test["message"].strip().splitlines()[0]
        assert first in terminal, f"{test['name']}: the recorded message is not what the terminal showed: {first}"
        trouble += [f"{test['name']}: {line}" for line in prose_trouble(test["message"], "en")]
    assert trouble == [], "\n".join(trouble)


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("verdict", [v for v in VERDICTS if v.twin], ids=[v.id for v in VERDICTS if v.twin])
def test_plain_pytest_of_a_verdict_twin_fails_with_its_message(verdict, outcomes):
    """A case of test_verdicts.py whose module is exactly a catalogued mistake (its ``twin``) gets
    its plain-pytest check here, on this file's run of that mistake (the same plain pytest, with
    the results plugin): exit status 1, no INTERNALERROR, the case's catalogue message said."""
    mistake = next(m for m in MISTAKES if m.id == verdict.twin)
    assert (mistake.stage, strip_markers(mistaken_source(mistake))) == (verdict.stage, edited(verdict)), \
        f"verdict case {verdict.id} is not the module of mistake {mistake.id}: fix its twin"
    done = outcomes[mistake.id]
    if isinstance(done, BaseException):
        raise done
    plain_pytest_fails_with_the_same_message(verdict, done)


#: Pairs (X, Y) where a learner with mistake X has, by the numbers, also made Y:
#: naming Y to them is no wrong blame.  Each pair says why.
ALSO_TRUE = {
    # checking only the root lets a new root on a released graph run until it meets a spent rule:
    # it does refuse after grads changed
    ("release-checked-on-the-root-only", "refuses-too-late"),
    # a recursive sort that raises the limit is still a recursive sort
    ("recursion-limit-raised", "recursive-topological-sort"),
    # drawing from the global random module moves its state: it does not leave it alone
    ("seed-ignored", "seed-reseeds-the-global-random"),
    # a train() that never zeroes adds its first step onto whatever the model already held, too
    ("train-no-zero-grad", "train-zeroes-after-the-step"),
    ("train-no-zero-grad", "train-zeroes-only-the-last-layer"),  # the same held grads, every layer's
}


def related(x, y) -> bool:
    """y's phrase says nothing new to a learner with mistake x: the same words, one inside the other."""
    return x.phrase in y.phrase or y.phrase in x.phrase


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_the_mistake_is_not_blamed_on_another(mistake, outcomes):
    """Blame only what is proven: every failing line of a learner with mistake X is free of the
    phrase that names any other classic mistake Y of its stage (unless X's numbers are Y's too:
    ALSO_TRUE).  A phrase names its mistake in its own stage's tests only (core/mistakes.py):
    stage 3's "crashed: RecursionError" is no claim of stage 5's recursive sort."""
    done = outcomes[mistake.id]
    if isinstance(done, BaseException):
        raise done
    output = done.stdout + done.stderr
    wrong = sorted({other.id for other in MISTAKES
                    if other.id != mistake.id and other.stage == mistake.stage and not related(mistake, other)
                    and (mistake.id, other.id) not in ALSO_TRUE and other.phrase in output})
    lines = [line for line in output.splitlines()
             if any(m.phrase in line for m in MISTAKES if m.id in wrong)]
    assert not wrong, (f"stage {mistake.stage} with the mistake {mistake.id!r} ({mistake.says}) is also told it made "
                       f"{wrong}:\n" + "\n".join(lines[:10]))


def right_pieces_blamed(number: int, source: str, output: str, own_phrase: str) -> list:
    """The catalogued mistakes of stage ``number`` whose piece ``source`` (a module of that stage
    with one change) leaves exactly as the reference has it (their ``old`` text is there), yet
    whose phrase ``output`` says: each a right piece blamed for a mistake made elsewhere.  A
    phrase equal to the change's own (``own_phrase``: two mistakes named alike) says nothing wrong."""
    return [m for m in MISTAKES
            if m.stage == number and m.phrase != own_phrase and m.old in source and m.phrase in output]


def blame_report(where: str, blamed: list, output: str) -> str:
    lines = [line for line in output.splitlines() if any(m.phrase in line for m in blamed)]
    return (f"{where}: the output names {[m.id for m in blamed]}, whose code is exactly the reference's "
            "(a right piece blamed for a mistake elsewhere):\n" + "\n".join(lines[:10]))


@pytest.mark.timeout(1200)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_a_right_piece_is_not_blamed_for_this_mistake(mistake, outcomes):
    """Not blamed elsewhere, on the evidence of the code itself: with only ``mistake`` made,
    every other catalogued mistake of its stage whose text the change left alone is a right
    piece, and its phrase must not be said (no hand-made list of exceptions, unlike ALSO_TRUE
    above: every pair there touches the same text, test_also_true_pairs_share_their_code)."""
    done = outcomes[mistake.id]
    if isinstance(done, BaseException):
        raise done
    output = done.stdout + done.stderr
    blamed = right_pieces_blamed(mistake.stage, mistaken_source(mistake), output, mistake.phrase)
    assert not blamed, blame_report(f"stage {mistake.stage} with only {mistake.id!r} ({mistake.says})", blamed, output)


def test_also_true_pairs_share_their_code():
    """ALSO_TRUE excuses naming Y to a learner with X only where X rewrote Y's own code: a pair
    whose pieces are apart would excuse blaming a right piece."""
    by_id = {m.id: m for m in MISTAKES}
    apart = [(x, y) for x, y in ALSO_TRUE if by_id[y].old in mistaken_source(by_id[x])]
    assert not apart, f"ALSO_TRUE pairs whose second mistake's code the first leaves as the reference has it: {apart}"


@pytest.mark.timeout(1200)
def test_a_class_summary_names_exactly_the_mistakes_planted_in_it(outcomes, tmp_path):
    """A class with every catalogued mistake planted, one student (named after it) per mistake,
    each graded from its stage's real test outcomes (results.json of the run above): the class
    summary (classroom/course/outputs.py) names exactly the planted mistakes, each under its label with
    exactly the students who made it (and, for a student, only what ALSO_TRUE or a phrase inside
    the planted one's makes true too). Grading through the judge is test_course.py's."""
    from autograd_kata.classroom.course.outputs import class_summary
    from autograd_kata.classroom.course.records import record, stubs
    from autograd_kata.classroom.grading.report import Report, StageGrade
    from autograd_kata.core.mistakes import label
    from autograd_kata.core.results.model import TestResult

    if set(outcomes) != {m.id for m in MISTAKES}:
        pytest.skip("needs every mistake's run: run the whole file")
    stub = stubs(ROOT, STAGES)
    records, expected = [], {}
    for m in MISTAKES:
        done = outcomes[m.id]
        if isinstance(done, BaseException):
            raise done
        results = Path(next(a for a in done.args if a.startswith("--kata-results=")).split("=", 1)[1])
        data = json.loads(results.read_text(encoding="utf-8"))
        s = stage(m.stage)
        g = StageGrade(s, tests=[TestResult(e["nodeid"], e["outcome"], e["message"], mistakes=tuple(e["mistakes"]))
                                 for e in data["tests"]],
                       source=s.source("exercises"), found=[s.source("exercises")])
        bad = [t for t in g.tests if t.status != "passed"]
        assert bad, f"{m.id}: every test of stage {m.stage} passed"
        g.problem = f"{len(bad)} of {g.total} tests did not pass; first: {bad[0].short}: {bad[0].headline}"
        r = record(m.id, Report(m.id, [g], isolated=True), results.parent, [s], "", "", stub, None)
        assert r["status"] == {str(m.stage): "failed"}, f"{m.id}: {r['status']}"
        records.append(r)
        output = done.stdout + done.stderr
        also = {o for o in MISTAKES if o.stage == m.stage and o.phrase in output
                and (o.phrase == m.phrase or (m.id, o.id) in ALSO_TRUE or related(m, o))}
        for o in also:
            expected.setdefault((o.stage, o.phrase), set()).add(m.id)
    summary = class_summary(records, STAGES)
    named = summary.split("\n\n")[-1].splitlines()[1:]
    want = {f"  stage {n}: {label(n, phrase)} -- {len(who)}: {', '.join(sorted(who))}"
            for (n, phrase), who in expected.items()}
    assert set(named) == want and len(named) == len(want), \
        "\n".join(["named but not planted:", *sorted(set(named) - want),
                   "planted but not named:", *sorted(want - set(named))])
    for m in MISTAKES:
        assert any(line.startswith(f"  stage {m.stage}: {label(m.stage, m.phrase)} --") and m.id in line
                   for line in named), m.id
