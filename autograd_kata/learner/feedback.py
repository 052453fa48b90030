"""What the learner reads after a test run: one stage's report, shared by
``kata check``, ``kata status`` and ``kata watch``.

A failing stage shows its most basic failure first and in full, then folds the
rest: failures of the same sort as "+4 more, probably the same cause", others
as "+1 more failing another way (a wrong value)". A module that does not import
explains every other failure, a stub not written yet explains the tests that
reach it, a hang stops the stage, a crash comes before a wrong value.  Within
a kind, the test file's order.  ``kata check N --all`` (and plain pytest)
show every failing test.

Output goes through :func:`say`, which survives a closed pipe (``kata check 3
| head -1`` keeps the stage's exit code) and a terminal that cannot show a
character (it becomes ``?``).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from autograd_kata.core.manifest import STAGES, Stage
from autograd_kata.core.term import cursor_ok, use_colour

_CODES = {"red": "31", "green": "32", "yellow": "33", "cyan": "36", "bold": "1", "dim": "2"}

# The order in which failures are shown (runner.Outcome.kind), most basic first.
KIND_ORDER = ("import", "unwritten", "hang", "crash", "wrong", "other", "not run")
KIND_NAMES = {"import": "does not import", "unwritten": "not written yet", "hang": "a hang", "crash": "a crash",
              "wrong": "a wrong value", "other": "an error in the test's set-up"}
FIRST_LINES = 12  # lines of the first failure's message shown (its whole message, nearly always)


class Style:
    """``style.red(text)`` etc.: ANSI colour when enabled, the text unchanged otherwise."""

    def __init__(self, colour: bool, stream=None):
        self.colour = colour
        encoding = (getattr(stream or sys.stdout, "encoding", None) or "").lower()
        fancy = encoding.replace("-", "").startswith("utf")
        self.tick, self.cross = ("✓", "✗") if fancy else ("+", "x")

    def __getattr__(self, name):
        code = _CODES.get(name)
        if code is None:
            raise AttributeError(name)
        return (lambda text: f"\033[{code}m{text}\033[0m") if self.colour else (lambda text: text)


def make_style(stream=None) -> Style:
    return Style(use_colour(stream), stream)


def tolerant_output() -> None:
    """A character the terminal cannot encode becomes '?' instead of a crash."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):
            pass


def say(*parts, file=None):
    stream = file or sys.stdout
    try:
        print(*parts, file=stream, flush=True)
    except BrokenPipeError:
        # The reader went away (`kata check 3 | head -1`): stop writing, but let the
        # command finish and return its own exit code. Python's recipe: point the
        # descriptor at devnull so the interpreter's last flush cannot fail again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass


# --- results ----------------------------------------------------------------

def announce(stages) -> None:
    """On a terminal that takes cursor codes, say which tests are running; then erase it."""
    stream = sys.stderr
    if not cursor_ok(stream):
        return
    try:
        if stages:
            numbers = ", ".join(str(s.number) for s in stages)
            stream.write(f"running the tests of stage{'s' * (len(stages) > 1)} {numbers}...")
        else:
            stream.write("\r\033[K")
        stream.flush()
    except (OSError, ValueError):
        pass


def results(stages, root, fresh=False):
    from autograd_kata.core.state import cached_results
    return cached_results(stages, root, fresh=fresh, announce=announce)


def first_unfinished(all_results) -> Stage | None:
    for s in STAGES:
        if not all_results[s.number].ok:
            return s
    return None


def next_stage_after(s: Stage, root: Path) -> Stage | None:
    """The first stage after ``s`` not already known to pass (from the cache only:
    nothing is run), or None when every later stage passes."""
    from autograd_kata.core.state import known_results
    done = {n for n, r in known_results(STAGES, root).items() if r.ok}
    return next((t for t in STAGES if t.number > s.number and t.number not in done), None)


def stage_state(s: Stage, result, root: Path) -> str:
    """done, in progress, not started (or: file missing)."""
    if result.ok:
        return "done"
    if not (root / s.source("exercises")).is_file():
        return "file missing"
    from autograd_kata.core.state import is_pristine
    untouched = is_pristine(s, root)
    if untouched is None:  # no pristine copy to compare with: judge by the tests
        untouched = result.passed == 0
    return "not started" if untouched else "in progress"


def short_name(name: str, s: Stage) -> str:
    return name.removesuffix(f"[{s.module}]")


def message_lines(message: str, limit: int | None = 3) -> list[str]:
    """The informative lines of a failure (pytest-check's rulers and tallies dropped)."""
    lines = []
    for line in message.splitlines():
        line = line.strip()
        if not line or set(line) <= set("-=_") or line.startswith("Failed Checks:"):
            continue
        line = line.removeprefix("FAILURE: ")
        if line not in lines:
            lines.append(line)
    if limit is not None and len(lines) > limit:
        more = len(lines) - limit
        lines = lines[:limit] + [f"(and {more} more line{'s' * (more > 1)}: --all shows them)"]
    return lines or ["(no message)"]


def _names(names: list[str], shown: int = 3) -> str:
    text = ", ".join(names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


def ordered_failures(result):
    """The failing tests, most basic kind first, then in the test file's order."""
    failing = [(i, t) for i, t in enumerate(result.tests) if t.status != "passed"]
    rank = {kind: n for n, kind in enumerate(KIND_ORDER)}
    failing.sort(key=lambda it: (rank.get(it[1].kind, len(rank)), it[0]))
    return [t for _, t in failing]


def report(result, root: Path, style: Style, out=say, everything: bool = False, feel=None) -> bool:
    """Print one stage's result and return whether it passes.  ``feel(stage)``
    (if given) yields extra lines for a passing stage: numbers from the
    learner's own engine."""
    s = result.stage
    head = f"Stage {s.number} - {s.title}"
    if result.problem:
        from autograd_kata.core.explain import HANG_PREFIX
        if result.problem.startswith(HANG_PREFIX):
            out(style.red(f"{style.cross} {head}: {result.problem.splitlines()[0]}"))
        else:
            out(style.red(f"{style.cross} {head}: could not be tested"))
        for line in result.problem.splitlines()[1 if result.problem.startswith(HANG_PREFIX) else 0:][:12]:
            out(f"    {line}")
        return False
    if result.ok:
        out(style.green(style.bold(f"{style.tick} {head}: all {result.total} tests pass. Well done!")))
        out(f"  What it taught: {s.lesson}")
        for line in (feel(s) if feel else ()):
            out(f"  {line}")
        steps = []
        if (root / s.source("solutions")).is_file():
            steps.append(f"compare with the reference: kata diff {s.number}")
        later = next_stage_after(s, root)
        if later is not None:
            steps.append(f"go on to stage {later.number} ({later.title}): kata check {later.number}")
        elif s.number == STAGES[-1].number:
            steps.append("that was the last stage: your engine is complete")
        else:
            steps.append("every later stage passes already: kata status shows them all")
        out(f"  Next: {steps[0]}")
        for step in steps[1:]:
            out(f"  then: {step}")
        return True
    out(style.bold(f"{head}: {result.passed}/{result.total} tests pass"))
    out("")
    failures = ordered_failures(result)
    groups: dict[str, list] = {}  # same message, one entry (insertion order = display order)
    for t in failures:
        groups.setdefault(t.message, []).append(t)
    shown = list(groups.items()) if everything else list(groups.items())[:1]
    for n, (message, tests) in enumerate(shown):
        out(style.red(f"{style.cross} {_names([short_name(t.name, s) for t in tests])}"))
        limit = None if everything else (FIRST_LINES if n == 0 else 3)
        for line in message_lines(message, limit):
            out(f"    {line}")
    if not everything:
        first_kind = failures[0].kind
        rest = [t for message, tests in list(groups.items())[1:] for t in tests]
        same = [short_name(t.name, s) for t in rest if t.kind == first_kind]
        other = [t for t in rest if t.kind not in (first_kind, "not run")]
        not_run = [short_name(t.name, s) for t in rest if t.kind == "not run"]
        if same:  # the same sort of failure after the most basic one: most often its echo
            out(style.dim(f"  +{len(same)} more, probably the same cause: {_names(same)}"))
        if other:  # a different sort: claim no common cause
            kinds = ", ".join(dict.fromkeys(KIND_NAMES.get(t.kind, t.kind) for t in other))
            out(style.dim(f"  +{len(other)} more failing another way ({kinds}): "
                          f"{_names([short_name(t.name, s) for t in other])}"))
        if not_run:
            out(style.dim(f"  +{len(not_run)} not run: the stage stopped at the first hang"))
        if rest:
            out(style.dim(f"  (every failure in full: kata check {s.number} --all)"))
    failing = result.total - result.passed
    out("")
    out(f"{failing} test{'s' * (failing != 1)} to go. Fix the first, then run `kata check {s.number}` again."
        f" Stuck? kata hint {s.number}")
    return False
