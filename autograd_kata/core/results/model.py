"""What a test run says, as data: one model that every reader builds.

The results plugin (``core.results``) writes one entry per test where the tests
run; ``TestResult.from_entry`` is the one place an entry becomes an object, for
the learner's runner and its cache, the feedback, the page, the grader, its
formats and the class summary.  Nothing here reads a message's words: the kind
of failure, the classic mistakes it names and the learner's line are fields,
and the message itself is kept as catalogue data (``said``) to be said again in
another language at the end (``in_language``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from autograd_kata.core.i18n import Text
from autograd_kata.core.manifest import Stage
from autograd_kata.core.results.kinds import KINDS

STATUSES = ("passed", "failed", "error", "skipped")


@dataclass
class TestResult:
    __test__ = False  # not a test class, whatever pytest thinks of its name

    name: str          # pytest's node id, e.g. tests/test_stage04_tanh.py::test_x[stage04_tanh]
    status: str        # passed, failed, error, skipped; "missing" when the judge never reported it
    message: str = ""
    kind: str | None = None  # what sort of failure (core/results/kinds.py), as the test process named it
    mistakes: tuple = ()     # the classic mistakes its messages name (core/mistakes.py label ids)
    said: list = field(default_factory=list)  # its messages as data (i18n.Text.data())
    where: tuple | None = None  # (file, line) of the learner's code the failure happened in, if known
    seconds: float = 0.0

    @classmethod
    def from_entry(cls, entry: dict, missing: str = "error") -> TestResult:
        """One entry of the results file (or of the learner's cache, which keeps the same
        shape), checked field by field: whatever is malformed fails closed (an unknown
        outcome is ``missing``, an unknown kind is none)."""
        status = str(entry["outcome"]) if entry.get("outcome") in STATUSES else missing
        kind = entry.get("kind") if entry.get("kind") in KINDS else None
        if kind is None and status != "passed":  # unnamed: no claim about its sort
            kind = "not run" if status == "skipped" else "other"
        seconds, where, mistakes = entry.get("duration"), entry.get("where"), entry.get("mistakes")
        return cls(str(entry.get("nodeid") or entry.get("name") or "?"), status,
                   str(entry.get("message") or ""), kind,
                   tuple(m for m in mistakes if isinstance(m, str)) if isinstance(mistakes, list) else (),
                   list(entry.get("said") or []) if isinstance(entry.get("said"), list) else [],
                   (str(where[0]), int(where[1])) if isinstance(where, list) and len(where) == 2
                   and isinstance(where[1], int) else None,
                   float(seconds) if isinstance(seconds, (int, float)) else 0.0)

    def to_entry(self) -> dict:
        """The results file's shape (``from_entry`` reads it back)."""
        return {"nodeid": self.name, "outcome": self.status, "kind": self.kind, "message": self.message,
                "mistakes": list(self.mistakes), "said": self.said,
                "where": list(self.where) if self.where else None, "duration": round(self.seconds, 4)}

    @property
    def short(self) -> str:
        """The test's name without its file, e.g. ``test_x[stage04_tanh]``."""
        return self.name.split("::", 1)[-1]

    @property
    def mistake(self) -> str | None:
        """The first classic mistake it names, if any."""
        return self.mistakes[0] if self.mistakes else None

    @property
    def headline(self) -> str:
        """The message's one line: a native traceback's is its last (the exception)."""
        lines = [line for line in self.message.splitlines() if line.strip()]
        if not lines:
            return self.status
        return lines[-1].strip() if lines[0].startswith("Traceback (most recent call last)") else lines[0]

    def in_language(self, lang: str) -> TestResult:
        """This result with its message said in ``lang``: from its messages as data, when
        they say exactly the message the test process wrote (in English); else as it is."""
        if lang == "en" or not self.said:
            return self
        try:
            if "\n".join(Text.load(d, "en") for d in self.said) != self.message:
                return self
            message = "\n".join(Text.load(d, lang) for d in self.said)
        except ValueError:
            return self
        return replace(self, message=message)


class Tally:
    """Counts over ``self.tests`` (``TestResult``s), failing closed."""

    tests: list[TestResult]

    @property
    def passed(self) -> int:
        return sum(t.status == "passed" for t in self.tests)

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total


@dataclass
class StageResult(Tally):
    """One stage's tests as one run gave them: the learner's (``core.runner``) or, with its
    points and the file it graded, the grader's (``classroom.report.StageGrade``)."""

    stage: Stage
    impl: str = "exercises"
    tests: list[TestResult] = field(default_factory=list)
    problem: str = ""       # why the stage did not pass when its tests cannot say it (could not run, ...)
    complete: bool = True   # every test of the stage was selected (no -k, -m, ...)
    problem_kind: str = ""  # "hang" (stopped), "missing" (no test file), "crash" (the run failed),
    # "untouched" (the module is its pristine stub: not run, no tests) or ""

    @property
    def ok(self) -> bool:
        return not self.problem and self.complete and self.all_passed

    @property
    def untouched(self) -> bool:
        """Not run: the module is still its pristine stub (``state.untouched``)."""
        return self.problem_kind == "untouched"

    @property
    def tests_missing(self) -> bool:
        """The stage's test file is missing."""
        return self.problem_kind == "missing"
