"""What a grading holds (the grader's last step, read by every format and the class
summary): each test's result as the judge reported it, each stage's grade and the
report, bounded in size whatever the submission makes its messages.

Scoring policy (``POLICY``): all or nothing per stage (``grade.py`` says why).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.core.i18n import Text, t_in
from autograd_kata.core.results.kinds import cause_first
from autograd_kata.core.results.model import StageResult, TestResult

POLICY = ("all or nothing per stage: a stage earns its points only when every one of its tests passes "
          "(advisory tests are reported, not scored)")
# what a report holds, whatever the submission makes its messages and its files (docs/instructors.md,
# "What is guaranteed"): a test's message at most MAX_MESSAGE characters, a stage's messages
# MAX_STAGE_MESSAGES bytes in all as a report writes them (then each failure keeps its first line while
# it fits, else only the note), at most MAX_FOUND candidate files named per stage: so a report stays
# under MAX_STAGE_REPORT bytes a stage in every format (a tooltest floods each part)
MAX_MESSAGE, MAX_STAGE_MESSAGES, MAX_HEADLINE = 4000, 32_000, 200
MAX_FOUND = 10
MAX_STAGE_REPORT = 50_000
# a stage's ``problem_kind`` when the grader, not the submission, failed: "not graded", never
# a score (no 0 in any format, a rerun grades it again, ``kata grade`` exits NOT_GRADED)
GRADER, NOT_GRADED = "grader", 3


@dataclass
class StageGrade(StageResult):
    """A stage's result as the grader judged it (``problem``: why it scored 0; its JSON calls
    it ``reason``), with its points and the submitted file it graded."""

    impl: str = "submission"
    seconds: float = 0.0
    source: str = ""       # the submitted file graded, relative to the submission
    found: list[str] = field(default_factory=list)  # the first MAX_FOUND candidate files, as shown
    found_total: int = 0   # how many candidates there were (0: as many as ``found``)
    file: Path | None = field(default=None, repr=False, compare=False)  # the graded file itself (not reported)
    # the advisory tests' results: reported, worth no points (the sandbox's word; docs/instructors.md)
    advisory: list[TestResult] = field(default_factory=list)

    @property
    def max_score(self) -> int:
        return self.stage.points

    @property
    def graded(self) -> bool:
        return self.problem_kind != GRADER

    @property
    def score(self) -> int:
        return self.stage.points if self.ok else 0

    @property
    def status(self) -> str:
        return "not_graded" if not self.graded else "passed" if self.ok else "failed"

    def file_note(self, lang: str = "en") -> str:
        """Which file was graded (one sentence); with several candidates, all of them and the rule."""
        if not self.source:
            return ""
        n = max(self.found_total, len(self.found))
        if n < 2:
            return t_in(lang, "report.graded_file", source=self.source)
        listed = ", ".join(self.found) + (", ..." if n > len(self.found) else "")
        return t_in(lang, "report.graded_file_of", source=self.source, n=n, found=listed)

    def to_dict(self) -> dict:
        s = self.stage
        return {"number": s.number, "module": s.module, "title": s.title, "points": s.points,
                "score": self.score if self.graded else None, "max_score": self.max_score, "status": self.status,
                "passed": self.passed, "total": self.total, "reason": self.problem, "reason_kind": self.problem_kind,
                "seconds": round(self.seconds, 3), "source": self.source, "found": list(self.found),
                "found_total": max(self.found_total, len(self.found)),
                "tests": [_test_dict(t) for t in self.tests], "advisory": [_test_dict(t) for t in self.advisory]}

    def advisory_notes(self, lang: str = "en") -> list[str]:
        """One line per advisory test that did not pass: said, and worth no points."""
        return [t_in(lang, "report.advisory_failed", test=t.short, headline=t.headline[:MAX_HEADLINE])
                for t in self.advisory if t.status != "passed"]


def _test_dict(t: TestResult) -> dict:
    return {"name": t.name, "status": t.status, "kind": t.kind, "mistakes": list(t.mistakes),
            "where": list(t.where) if t.where else None, "message": t.message, "seconds": round(t.seconds, 3)}


@dataclass
class Report:
    submission: str
    stages: list[StageGrade]
    seconds: float = 0.0
    message: str = ""  # about the whole grading (e.g. the grader itself failed)
    warnings: list[str] = field(default_factory=list)  # for the instructor, not the student
    isolated: bool = False
    isolation: str = ""  # one line: how the submitted code was kept apart
    hidden_seed: int | None = None  # the hidden checks' seed: the instructor's JSON only, never a student's

    @property
    def graded(self) -> bool:
        """False when the grader failed on some stage: the report is then no grade at all."""
        return all(g.graded for g in self.stages)

    @property
    def score(self) -> int:
        return sum(g.score for g in self.stages)

    @property
    def max_score(self) -> int:
        return sum(g.max_score for g in self.stages)

    @property
    def first_line(self) -> str:
        """The report's first line: a missing uid boundary is said before anything else."""
        return self.isolation if not self.isolated else f"kata grade: {self.submission}"

    def to_dict(self) -> dict:
        return {"isolation": self.isolation, "isolated": self.isolated,
                "kata_version": __version__, "policy": POLICY, "submission": self.submission,
                "graded": self.graded, "score": self.score if self.graded else None, "max_score": self.max_score,
                "seconds": round(self.seconds, 3),
                "message": self.message, "warnings": list(self.warnings), "hidden_seed": self.hidden_seed,
                "stages": [g.to_dict() for g in self.stages]}


def printable(text: str) -> str:
    """``text`` as any report may hold it: no control character but newline and tab (no
    terminal escape, no carriage return, nothing XML refuses), no half of a character."""
    return text.translate(_UNPRINTABLE)


_UNPRINTABLE = {**{c: None for c in (*range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))},
                **{c: 0xFFFD for c in range(0xD800, 0xE000)}, 0xFFFE: 0xFFFD, 0xFFFF: 0xFFFD}


def not_passed(g: StageGrade, lang: str) -> str:
    """Why a stage whose tests ran scored 0: how many failed, and the one that explains the
    most (``kinds.cause_first``, as ``kata check`` shows it), in ``lang``."""
    bad = cause_first(g.tests)
    return t_in(lang, "report.not_passed", bad=len(bad), total=g.total, first=bad[0].short,
                headline=bad[0].headline)


def grader_failed(g: StageGrade, why: str) -> None:
    """``g`` is not graded: the grader failed (``why``, one of its reasons)."""
    g.problem, g.problem_kind = say("report.reason.not_graded", why=why), GRADER


def say(msgid: str, **fields) -> str:
    """A reason of the grader's own (a missing file, a judge that stopped), in English, the
    judge's language, and kept as data (``i18n.Text``): ``in_language`` says it again."""
    return t_in("en", msgid, **fields)


def in_language(report: Report, lang: str) -> Report:
    """``report`` with every test's message said in ``lang`` where its data allows
    (``TestResult.in_language``): the judge speaks English, each format speaks ``lang``;
    the grader's own words (reasons, the isolation line, notes) are said again too."""
    def again(text):
        return text.render(lang) if isinstance(text, Text) else text
    stages = []
    for g in report.stages:
        said = replace(g, tests=[test.in_language(lang) for test in g.tests] if lang != "en" else g.tests,
                       advisory=[test.in_language(lang) for test in g.advisory] if lang != "en" else g.advisory)
        if isinstance(g.problem, Text) and g.problem.msgid == "report.not_passed":  # from the tests said again
            said.problem = not_passed(said, lang)
        else:  # one of the grader's own (``say``)
            said.problem = again(g.problem)
        stages.append(said)
    return replace(report, stages=stages, message=again(report.message), isolation=again(report.isolation),
                   warnings=[again(w) for w in report.warnings])


# --- from the judge's results --------------------------------------------------------

def fill(grade: StageGrade, ids: list[str], reported: dict, advisory=frozenset()) -> None:
    """Add to ``grade`` a TestResult for each of ``ids`` (the collected tests), from what the judge
    ``reported`` ({node id: its results entry}); a test it did not report is "missing".  The
    ``advisory`` ones go to ``grade.advisory``: reported, not scored."""
    budget = MAX_STAGE_MESSAGES
    for nodeid in ids:
        where = grade.advisory if nodeid in advisory else grade.tests
        entry = reported.get(nodeid)
        if entry is None:
            where.append(TestResult(nodeid, "missing", "not run"))
            continue
        test = TestResult.from_entry(entry, missing="missing")
        test.message = _bounded(test.message, budget)
        budget -= _cost(test.message)
        where.append(test)
        grade.seconds += test.seconds


def _cost(text: str) -> int:
    """At least the bytes ``text`` takes in any report (UTF-8, JSON's and XML's escapes counted)."""
    return len(text.encode("utf-8", "replace")) + 4 * sum(text.count(c) for c in '<>&"\\')


def _bounded(message: str, budget: int) -> str:
    """A test's message within MAX_MESSAGE, or only its first line once the stage's budget is
    spent (only the note once not even that fits)."""
    if len(message) > MAX_MESSAGE:
        message = f"{message[:MAX_MESSAGE]}\n... [{len(message) - MAX_MESSAGE} more characters cut]"
    if _cost(message) > budget:
        note = f"... [cut: this stage's messages reached {MAX_STAGE_MESSAGES} bytes]"
        first = TestResult("", "failed", message).headline[:MAX_HEADLINE]
        message = f"{first}\n{note}" if _cost(first) + _cost(note) <= budget else note
    return message
