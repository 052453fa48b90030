"""What the learner reads after a test run: one stage's report, shared by
``kata check``, ``kata status`` and ``kata watch``.

A failing stage shows its most basic failure first and in full, then folds the
rest: failures of the same kind as "+4 more of the same kind (a wrong value)", others
as "+1 more failing another way (a crash)"; neither claims a common cause, which
only the numbers of each test could prove. A module that does not import
explains every other failure, a stub not written yet explains the tests that
reach it, a hang stops the stage, a wrong value that names a classic mistake
comes before a crash (which it often causes), and a crash before any other
wrong value.  Within
a kind, the test file's order.  ``kata check N --all`` (and plain pytest)
show every failing test.

Output goes through :func:`autograd_kata.core.term.say`, which survives a closed pipe (``kata check 3
| head -1`` keeps the stage's exit code) and a terminal that cannot show a
character (it becomes ``?``).
"""
from __future__ import annotations

import sys
from pathlib import Path

from autograd_kata.core.i18n import t
from autograd_kata.core.manifest import STAGES, Stage
from autograd_kata.core.results.kinds import KINDS, cause_first
from autograd_kata.core.term import cursor_ok, say, use_colour

_CODES = {"red": "31", "green": "32", "yellow": "33", "cyan": "36", "bold": "1", "dim": "2"}

KIND_NAMES = tuple(k for k in KINDS if k != "not run")  # named by the catalogue: check.kind.<kind>
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


# --- results ----------------------------------------------------------------

def announce(stages) -> None:
    """On a terminal that takes cursor codes, say which tests are running; then erase it."""
    stream = sys.stderr
    if not cursor_ok(stream):
        return
    try:
        if stages:
            numbers = ", ".join(str(s.number) for s in stages)
            stream.write(t("check.running", n=len(stages), numbers=numbers))
        else:
            stream.write("\r\033[K")
        stream.flush()
    except (OSError, ValueError):
        pass


def results(stages, root, fresh=False, overview=False):
    """Each stage's result; for an ``overview`` an untouched stub is "not started" unrun."""
    from autograd_kata.core.state import cached_results
    return cached_results(stages, root, fresh=fresh, announce=announce, overview=overview)


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


def title(s: Stage) -> str:
    """The stage's title in the learner's language."""
    return t(s.title_id)


def state_name(state: str) -> str:
    """A state of ``stage_state`` ("in progress") as the learner reads it."""
    return t(f"status.state.{state.replace(' ', '_')}")


def stage_state(s: Stage, result, root: Path) -> str:
    """done, in progress, not started (or: file missing)."""
    if result.ok:
        return "done"
    if result.untouched:
        return "not started"
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
        lines = lines[:limit] + [t("check.more_lines", n=more)]
    return lines or [t("check.no_message")]


def _names(names: list[str], shown: int = 3) -> str:
    text = ", ".join(names[:shown])
    return t("check.names_more", names=text, more=len(names) - shown) if len(names) > shown else text


def ordered_failures(result):
    """The failing tests, the one that explains the most first (``kinds.cause_first``)."""
    return cause_first(result.tests)


def report(result, root: Path, style: Style, out=say, everything: bool = False, feel=None) -> bool:
    """Print one stage's result and return whether it passes.  ``feel(stage)``
    (if given) yields extra lines for a passing stage: numbers from the
    learner's own engine."""
    s = result.stage
    head = t("check.head", n=s.number, title=title(s))
    if result.problem:
        hung = result.problem_kind == "hang"
        if hung:
            out(style.red(f"{style.cross} {head}: {result.problem.splitlines()[0]}"))
        else:
            out(style.red(f"{style.cross} {t('check.untestable', head=head)}"))
        for line in result.problem.splitlines()[1 if hung else 0:][:12]:
            out(f"    {line}")
        return False
    if result.ok:
        out(style.green(style.bold(f"{style.tick} {t('check.pass', head=head, total=result.total)}")))
        out(f"  {t('check.taught', lesson=s.lesson)}")
        for line in (feel(s) if feel else ()):
            out(f"  {line}")
        steps = []
        if (root / s.source("solutions")).is_file():
            steps.append(t("check.step_diff", n=s.number))
        later = next_stage_after(s, root)
        if later is not None:
            steps.append(t("check.step_next", n=later.number, title=title(later)))
        elif s.number == STAGES[-1].number:
            steps.append(t("check.step_last"))
        else:
            steps.append(t("check.step_all_later"))
        out(f"  {t('check.next', step=steps[0])}")
        for step in steps[1:]:
            out(f"  {t('check.then', step=step)}")
        return True
    out(style.bold(t("check.tally", head=head, passed=result.passed, total=result.total)))
    out("")
    failures = ordered_failures(result)
    groups: dict[str, list] = {}  # same message, one entry (insertion order = display order)
    for test in failures:
        groups.setdefault(test.message, []).append(test)
    shown = list(groups.items()) if everything else list(groups.items())[:1]
    for n, (message, tests) in enumerate(shown):
        out(style.red(f"{style.cross} {_names([short_name(test.short, s) for test in tests])}"))
        limit = None if everything else (FIRST_LINES if n == 0 else 3)
        for line in message_lines(message, limit):
            out(f"    {line}")
        if n == 0 and any(m.endswith("-assigns") for m in tests[0].mistakes):  # a rule assigns: =+ for +=?
            from autograd_kata.learner.feel_source import plus_typos
            for line in plus_typos(s, root):
                out(f"    {line}")
    if not everything:
        first_kind = failures[0].kind
        rest = [test for message, tests in list(groups.items())[1:] for test in tests]
        same = [short_name(test.short, s) for test in rest if test.kind == first_kind]
        other = [test for test in rest if test.kind not in (first_kind, "not run")]
        not_run = [short_name(test.short, s) for test in rest if test.kind == "not run"]
        if same:  # the same kind of failure after the most basic one: often its echo, not always
            kind = t(f"check.kind.{first_kind}") if first_kind in KIND_NAMES else first_kind
            out(style.dim("  " + t("check.fold_same", k=len(same), kind=kind, names=_names(same))))
        if other:  # a different sort: claim no common cause
            kinds = t("check.kinds_sep").join(dict.fromkeys(
                t(f"check.kind.{test.kind}") if test.kind in KIND_NAMES else test.kind for test in other))
            out(style.dim("  " + t("check.fold_other", k=len(other), kinds=kinds,
                                   names=_names([short_name(test.short, s) for test in other]))))
        if not_run:
            out(style.dim("  " + t("check.fold_not_run", k=len(not_run))))
        if rest:
            out(style.dim("  " + t("check.fold_all", n=s.number)))
    failing = result.total - result.passed
    out("")
    out(t("check.to_go", n=failing, stage=s.number))
    return False
