"""A graded crash and a graded hang, said again in Japanese from their data (issue 17).

The judge speaks English and keeps every failure's message as catalogue data
(``"said"``: ids and fields, ``i18n.joined`` for a message of several parts);
``kata grade --lang ja`` says it again in Japanese (``report.in_language``).
Checked here on a submission whose stage 2 crashes in the learner's line and
whose stage 5 loops for ever:

* every failing test's data, said in English, is exactly the judge's message
  (nothing is parsed from prose, and nothing is lost on the way);
* said in Japanese, no English phrase of its catalogue messages is left;
* the hang names the learner's file:line in the stage's reason, as ``kata check`` does.
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from autograd_kata.classroom.grading.grade import grade
from autograd_kata.classroom.grading.report import in_language
from autograd_kata.core.i18n import Text, joined, raw, t_in
from autograd_kata.core.manifest import STAGES, stage
from kit import ROOT, reference

pytestmark = pytest.mark.timeout(240)

CRASH = ("Value(self.data + other.data,", "Value(self.data + other.dat,")  # stage 2: an AttributeError
LOOP = ("    def backward(self", "    def backward(self, *_, **__):\n        while True:\n            pass\n\n"
        "    def _old(self")  # stage 5: backward() never returns


def changed(number: int, old: str, new: str) -> str:
    text = reference(number)
    assert text.count(old) == 1, f"{old!r} is not found exactly once in stage {number}'s reference"
    return text.replace(old, new)


@pytest.fixture(scope="module")
def submission(tmp_path_factory):
    folder = tmp_path_factory.mktemp("student")
    for s in STAGES:
        path = folder / s.source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(reference(s.number), encoding="utf-8")
    (folder / stage(2).source("exercises")).write_text(changed(2, *CRASH), encoding="utf-8")
    (folder / stage(5).source("exercises")).write_text(changed(5, *LOOP), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def report(submission):
    return grade(submission, ROOT, stages=[stage(2), stage(5)])


def ids(data) -> set[str]:
    """The catalogue ids a message's data is made of."""
    if "join" in data:
        return set().union(*(ids(part) for part in data["join"] if isinstance(part, dict)))
    return {data["id"]}.union(*(ids(v) for v in data["args"].values() if isinstance(v, dict)))


def values(data) -> list[str]:
    """The fields' own words (a test's name, Python's message, the learner's line)."""
    if "join" in data:
        return [v for part in data["join"] if isinstance(part, dict) for v in values(part)]
    return [x for v in data["args"].values() for x in (values(v) if isinstance(v, dict) else [str(v)])]


def english_left(said: list, japanese: str) -> list[str]:
    """The English phrases (a stretch of a message without fields, with a word in it) of
    ``said``'s catalogue messages that are in ``japanese`` outside its fields' own words,
    and in none of their Japanese texts."""
    used = set().union(*map(ids, said))
    for value in sorted({v for d in said for v in values(d)}, key=len, reverse=True):
        japanese = japanese.replace(value, "\0")
    theirs = "".join(raw(i, "ja", n=1) for i in used)
    phrases = {p.strip() for i in used for p in re.split(r"\{[^}]*\}", raw(i, "en", n=1))}
    return sorted(p for p in phrases if re.search(r"[A-Za-z]{3,}", p) and p in japanese and p not in theirs)


def failing(report, number):
    g = next(g for g in report.stages if g.stage.number == number)
    bad = [t for t in g.tests if t.status != "passed"]
    assert bad, f"stage {number} passed: the submission's change did not break it"
    return g, bad


@pytest.mark.parametrize("number,kinds", [(2, {"crash"}), (5, {"hang", "not run"})])
def test_each_failure_is_data_that_says_the_judges_message_again_exactly(report, number, kinds):
    _, bad = failing(report, number)
    assert {t.kind for t in bad} == kinds, [(t.short, t.kind) for t in bad]
    for t in bad:
        assert t.said, f"{t.short}: its message is not kept as data:\n{t.message}"
        again = "\n".join(Text.load(d, "en") for d in t.said)
        assert again == t.message, f"{t.short}: said again in English it differs:\n{again}\n---\n{t.message}"


@pytest.mark.parametrize("number", [2, 5])
def test_said_in_japanese_no_english_of_the_catalogue_is_left(report, number):
    g, bad = failing(report, number)
    said = next(s for s in in_language(report, "ja").stages if s.stage.number == number)
    for t, ja in zip(bad, [t for t in said.tests if t.status != "passed"], strict=True):
        assert ja.message != t.message, f"{t.short} is still said in English:\n{ja.message}"
        left = english_left(t.said, ja.message)
        assert not left, f"{t.short}: English left in Japanese {left}:\n{ja.message}"
    assert said.problem != g.problem and not english_left(bad[0].said, said.problem), said.problem


def test_a_graded_hang_names_the_learners_line_in_its_reason(report):
    g, (hung, *rest) = failing(report, 5)
    lines = changed(5, *LOOP).splitlines()
    at = next(i for i, line in enumerate(lines, 1) if line == "        while True:")
    where = (f"exercises/stage05_backward.py:{at}: while True:", f"exercises/stage05_backward.py:{at + 1}: pass")
    assert hung.kind == "hang" and any(w in hung.message for w in where), hung.message
    assert any(w in g.problem.splitlines()[0] for w in where), f"the reason does not say where:\n{g.problem}"
    assert rest and {t.status for t in rest} == {"skipped"}, [(t.short, t.status) for t in rest]


def test_kata_grade_in_japanese_says_the_crash_and_the_hang_in_japanese(submission):
    done = subprocess.run([sys.executable, "-m", "autograd_kata", "grade", "--submission", str(submission),
                           "--stage", "2", "--stage", "5", "--lang", "ja"], cwd=ROOT,
                          capture_output=True, text=True, encoding="utf-8", timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    reasons = [line for line in done.stdout.splitlines() if line.lstrip().startswith("->")]
    assert len(reasons) == 2, done.stdout
    for msgid, reason in zip(("crash.prefix", "hang.prefix"), reasons, strict=True):
        assert raw(msgid, "ja") in reason and raw(msgid, "en") not in reason, done.stdout
    assert "exercises/stage05_backward.py:" in reasons[1], done.stdout
    for english in ("tests did not pass", "the test ran past its", "crashed: ", "hung: "):
        assert english not in done.stdout, f"English left ({english!r}):\n{done.stdout}"


def test_a_joined_message_is_data_that_each_language_says_part_by_part():
    head = t_in("en", "crash.head", type="TypeError", said="bad operand")
    line = joined([t_in("en", "crash.prefix"), head])
    message = joined([line, t_in("en", "crash.none_called"), "  -> kata hint 2"], "\n")
    assert message == f"crashed: TypeError: bad operand\n{raw('crash.none_called', 'en')}\n  -> kata hint 2"
    data = message.data()
    assert data["join"][1] == "\n" and data["join"][-1] == "  -> kata hint 2", data
    assert Text.load(data, "en") == message and message.ids() == {"crash.prefix", "crash.head", "crash.none_called"}
    ja = Text.load(data, "ja")
    assert ja == message.render("ja") and raw("crash.prefix", "ja") in ja and "crashed" not in ja, ja
    # a joined message in a field of another nests, and is said again inside it
    hang = t_in("en", "hang.message", limit="2", where=joined(["<", t_in("en", "crash.some_function"), ">"]), n=5)
    assert Text.load(hang.data(), "ja") == hang.render("ja") and "<" + raw("crash.some_function", "ja") + ">" in \
        Text.load(hang.data(), "ja")
    for bad in ({"join": [3]}, {"join": "x"}, {"join": [{"id": "no.such.id", "args": {}}]}):
        with pytest.raises(ValueError):
            Text.load(bad, "en")


def test_the_sandboxs_own_reasons_are_data_too(tmp_path):
    """A sandbox that ended, or that was stopped before: its reasons come from the catalogue,
    so a report in Japanese says them in Japanese."""
    from autograd_kata.classroom.sandbox import remote

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "toy.py").write_text("import os\n\n\ndef die():\n    os._exit(3)\n")
    toy = remote.connect("pkg.toy", tmp_path)
    for expected in ("sandbox.ended", "sandbox.stopped_earlier"):
        with pytest.raises(remote.SandboxError) as raised:
            toy.die()
        said = raised.value.args[0]
        assert isinstance(said, Text) and said.msgid == expected, said
        data = said.data()
        assert Text.load(data, "en") == str(raised.value), data
        ja = Text.load(data, "ja")
        assert raw("sandbox.how_exited", "ja").split("{")[0] in ja and not english_left([data], ja), ja


def test_a_stage_stopped_by_its_budget_says_so_as_data_and_counts_as_not_run(tmp_path):
    """The judge's budget per test file: once spent, the file's other tests are not run
    (never a pass), said as ``kata check`` says a test not run, and kept as data."""
    from autograd_kata.core.results.model import TestResult
    from autograd_kata.core.runner import read_results

    (tmp_path / "test_x.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(0.3)\n\n\n"
                                        "def test_next():\n    pass\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "test_x.py", "-q", "-p", "no:cacheprovider",
                           "-p", "autograd_kata.core.results.channel", "--kata-results=r.json",
                           "-p", "autograd_kata.classroom.grading.plugin", "--kata-stage-budget=0.1",
                           "--kata-collected=c.json", "-p", "autograd_kata.core.results.verdicts"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    entries = {e["name"]: e for e in read_results(tmp_path / "r.json")["tests"]}
    stopped = TestResult.from_entry(entries["test_next"])
    assert (stopped.status, stopped.kind) == ("skipped", "not run"), done.stdout + done.stderr
    assert stopped.message == raw("check.not_run.prefix", "en") + t_in("en", "judge.stage_budget", budget="0.1")
    ja = stopped.in_language("ja").message
    assert ja == t_in("ja", "check.not_run.prefix") + t_in("ja", "judge.stage_budget", budget="0.1"), ja
    assert TestResult.from_entry(entries["test_slow"]).status == "passed"


def test_the_graders_own_reasons_are_said_in_the_language_asked_for(tmp_path):
    """A stage the grader cannot judge (no file, a symbolic link): its reason is a catalogue
    message, in English for the judge's JSON, in Japanese for a report asked in Japanese."""
    from autograd_kata.classroom.grading.folders import prepare_stage
    from autograd_kata.classroom.grading.report import Report

    (tmp_path / "exercises").mkdir()
    (tmp_path / "elsewhere.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / stage(2).source("exercises")).symlink_to(tmp_path / "elsewhere.py")
    missing = prepare_stage(stage(1), tmp_path, tmp_path / "f1")
    linked = prepare_stage(stage(2), tmp_path, tmp_path / "f2")
    assert missing.problem == t_in("en", "report.reason.no_file", file=stage(1).source("exercises"))
    assert linked.problem == t_in("en", "report.reason.symlink", source=stage(2).source("exercises"))
    said = in_language(Report("s", [missing, linked]), "ja").stages
    assert [g.problem for g in said] == [t_in("ja", "report.reason.no_file", file=stage(1).source("exercises")),
                                        t_in("ja", "report.reason.symlink", source=stage(2).source("exercises"))]


def test_every_reason_the_grader_gives_is_a_catalogue_message():
    """Read from the source: each ``.problem =`` and ``.message =`` of the grader is said with
    ``say`` (or is the usual ``not_passed``, or copies another), never an f-string of its own."""
    import ast
    from pathlib import Path

    found = []
    for path in sorted((ROOT / "autograd_kata" / "classroom").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                pairs = zip(target.elts, node.value.elts, strict=True) if isinstance(target, ast.Tuple) and \
                    isinstance(node.value, ast.Tuple) else [(target, node.value)]
                for aim, value in pairs:
                    if isinstance(aim, ast.Attribute) and aim.attr == "problem" and not (
                            isinstance(value, ast.Call) and (getattr(value.func, "id", "") in ("say", "not_passed")
                                                             or getattr(value.func, "attr", "") == "render")
                            or isinstance(value, (ast.Name, ast.Attribute))):
                        found.append(f"{Path(path).name}:{node.lineno}")
    assert not found, "a grader's reason said in words of its own (use report.say):\n" + "\n".join(found)


def test_the_text_table_lines_up_in_japanese_as_a_terminal_shows_it(tmp_path):
    """Kana and kanji take two columns: each column starts at the same terminal column
    in the header and in every stage's row, and a reason under its stage's title, in both languages."""
    from autograd_kata.classroom.grading.folders import prepare_stage
    from autograd_kata.classroom.grading.formats import as_text, title
    from autograd_kata.classroom.grading.report import Report
    from autograd_kata.core.term import width

    report = Report("s", [prepare_stage(stage(n), tmp_path, tmp_path / f"f{n}") for n in (1, 2)], isolated=True)
    for lang in ("en", "ja"):
        lines = as_text(report, lang).splitlines()
        head = next(i for i, line in enumerate(lines) if line.startswith(raw("report.col.stage", lang)))
        rows = [lines[head]] + [line for line in lines[head + 1:] if line[:1].isdigit()]
        title_at = {width(line[:line.index(part)]) for line, part in
                    zip(rows, [raw("report.col.title", lang)] + [title(stage(n), lang) for n in (1, 2)], strict=True)}
        ends = {width(line.rstrip()) for line in rows}
        arrows = {width(line[:line.index("->")]) for line in lines if line.lstrip().startswith("->")}
        assert len(rows) == 3 and len(title_at) == 1 and len(ends) == 1, "\n".join(rows)
        assert arrows == title_at, "a stage's reason starts where its title does:\n" + "\n".join(lines)
