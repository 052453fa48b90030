"""The learner's commands: ``status``, ``check``, ``hint``, ``diff``, ``reset``, ``watch``.

Each is a plain function of the parsed values that returns an exit status or
raises ``Refusal``; ``autograd_kata.cli`` (its table) parses, prints the refusal
and exits.  ``kata`` alone runs ``status``.  Every command finds the kata from the working
directory (``manifest.find_root``), runs tests through ``autograd_kata.core.runner`` (results
cached in ``.kata/`` by file content, so a repeated call is instant), and keeps
its little state in ``.kata/`` (git-ignored).  Every message is in the learner's
language (``--lang``, else ``KATA_LANG``, else the locale): ``t(id)`` reads it from
the catalogue in ``autograd_kata/locales/``.

Colour only on a terminal, never with ``NO_COLOR`` set (``FORCE_COLOR`` forces
it on where ``NO_COLOR`` is unset).  Imports here stay light: the runner,
difflib and watchdog are imported inside the handlers.
"""
from __future__ import annotations

import sys
from pathlib import Path

from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t, t_in
from autograd_kata.core.manifest import STAGES, check_ids, find_root
from autograd_kata.core.manifest import stage as stage_numbered
from autograd_kata.core.term import pad, say, width
from autograd_kata.learner.feedback import first_unfinished, make_style, report, results, stage_state, state_name, title

LEVELS = (1, 2, 3)


# The report and its output live in feedback.py, shared with watch.py.

def rel(path: Path, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return str(path)


# --- status -----------------------------------------------------------------

def status() -> int:
    root = find_root()
    check_ids()  # an added stage without its title or lesson in the catalogue: one line that names it
    style = make_style()
    got = results(STAGES, root, overview=True)
    titles = {s.number: title(s) for s in STAGES}
    wide = max(width(text) for text in [*titles.values(), t("status.col.stage")])
    out = say
    out(style.bold(f"{'#':>2}  {pad(t('status.col.stage'), wide)}  {pad(t('status.col.tests'), 7, right=True)}  "
                   f"{t('status.col.state')}"))
    colours = {"done": style.green, "in progress": style.yellow, "file missing": style.red}
    problems = []
    for s in STAGES:
        r = got[s.number]
        state = stage_state(s, r, root)
        if r.untouched:  # its stub, unrun
            tests = "-"
        elif r.problem:
            tests = "-"
            problems.append((s, t("status.no_tests") if r.tests_missing
                             else t("status.untestable", n=s.number, problem=r.problem.splitlines()[0])))
        else:
            tests = f"{r.passed}/{r.total}"
        paint = colours.get(state, lambda text: text)
        out(f"{s.number:>2}  {pad(titles[s.number], wide)}  {tests:>7}  {paint(state_name(state))}")
    for s, problem in problems:
        out(style.dim("    " + t("status.problem", n=s.number, problem=problem.splitlines()[0])))
    nxt = first_unfinished(got)
    if nxt is None:
        last = STAGES[-1].number
        compare = (root / STAGES[-1].source("solutions")).is_file()
        out(style.bold(t("status.all_pass_compare" if compare else "status.all_pass", k=len(STAGES), last=last)))
        return 0
    state = stage_state(nxt, got[nxt.number], root)
    where = nxt.source("exercises")
    which = {"not started": "status.next_not_started", "file missing": "status.next_missing"}
    out(style.bold(t(which.get(state, "status.next_in_progress"), n=nxt.number, title=title(nxt), where=where)))
    return 0


# --- check ------------------------------------------------------------------

def check(stage: str | None = None, everything: bool = False) -> int:
    root = find_root()
    check_ids()
    style = make_style()
    if stage is None:
        s = first_unfinished(results(STAGES, root, overview=True))
        if s is None:
            say(style.green(f"{style.tick} {t('check.all_pass', k=len(STAGES), last=STAGES[-1].number)}"))
            return 0
    else:
        s = stage_numbered(stage)
    result = results([s], root, fresh=True)[s.number]
    from autograd_kata.learner.feel import feel
    return 0 if report(result, root, style, everything=everything, feel=lambda st: feel(st, root)) else 1


# --- hint -------------------------------------------------------------------

_LEVEL_MARKERS = ("Level", "レベル")  # "## Level 2 — the shape" / "## レベル2 — 形"


def parse_hints(text: str) -> tuple[str, dict[int, tuple[str, str]]]:
    """The title (first line) and ``{level: (heading, body)}`` of a hint file.
    A level starts at a ``## Level N`` line (``## レベルN`` in Japanese files)."""
    lines = text.splitlines()
    title = lines[0].lstrip("#").strip() if lines else ""
    levels: dict[int, tuple[str, list[str]]] = {}
    current = None
    for line in lines[1:]:
        heading = line.lstrip("#").strip() if line.startswith("## ") else ""
        marker = next((m for m in _LEVEL_MARKERS if heading.startswith(m)), None)
        if marker:
            digits = "".join(ch for ch in heading[len(marker):].lstrip()[:2] if ch.isdigit())
            current = int(digits) if digits else None
            if current is not None:
                levels[current] = (heading, [])
            continue
        if current is not None:
            levels[current][1].append(line)
    return title, {n: (head, "\n".join(body).strip("\n")) for n, (head, body) in levels.items()}


def hint(stage: str | None = None, level: int | None = None) -> int:
    from autograd_kata.core.i18n import current_language, language_name, languages, t
    from autograd_kata.core.state import hint_seen, record_hint
    root = find_root()
    check_ids()
    style = make_style()
    if stage is None:  # as `kata check`: the first unfinished stage
        s = first_unfinished(results(STAGES, root, overview=True))
        if s is None:
            say(style.green(t("hint.all_done", n=len(STAGES), last=STAGES[-1].number)))
            return 0
        say(style.dim(t("hint.current_stage", n=s.number)))
    else:
        s = stage_numbered(stage)
    lang = current_language()
    tried = [lang] + [other for other in languages() if other != lang]
    path = next((root / s.hint_file(one) for one in tried if (root / s.hint_file(one)).is_file()), None)
    if path is None:
        raise Refusal(t("hint.missing", n=s.number, file=s.hint_file(lang), tests=s.test_file))
    shown_lang = path.parent.name
    heading, levels = parse_hints(path.read_text(encoding="utf-8"))
    top = max((n for n in levels if n in LEVELS), default=0)
    if not top:
        raise Refusal(t("hint.no_level", file=rel(path, root), level=1))
    seen = hint_seen(s, root)
    asked = level
    level = asked or min(seen + 1, top)
    if level not in levels:
        raise Refusal(t("hint.no_level", file=rel(path, root), level=level))
    if shown_lang != lang:
        say(style.dim(t("hint.other_language", n=s.number, wanted=language_name(lang),
                        shown=language_name(shown_lang))))
    _, body = levels[level]
    say(style.bold(heading or t("hint.title", n=s.number, title=title(s))))
    say(style.cyan(t("hint.level_heading", level=level, name=t(f"hint.level.{level}")))
        + style.dim("  " + t("hint.level_of", level=level, top=top)))
    say("")
    say(body)
    say("")
    record_hint(s, root, level)
    if level < top:
        say(style.dim(t("hint.more", n=s.number, next=level + 1, top=top)))
    elif asked is None and seen >= top:
        say(style.dim(t("hint.already_last", top=top, tests=s.test_file)))
    else:
        say(style.dim(t("hint.last", top=top, n=s.number)))
    return 0


# --- diff -------------------------------------------------------------------

def diff(stage: str, reveal: bool = False, previous: bool = False) -> int:
    import difflib

    from autograd_kata.core.build import strip_markers
    root = find_root()
    style = make_style()
    s = stage_numbered(stage)
    if previous:  # what stage N adds to N-1: the stubs, or with --reveal the reference
        from autograd_kata.core.build import previous_diff
        try:
            code = show_diff(previous_diff(root, s, reveal=reveal), style)
        except FileNotFoundError as missing:
            raise Refusal(str(missing)) from None
        plus_equals_note(s, root, style)
        return code
    reference = root / s.source("solutions")
    mine = root / s.source("exercises")
    if not reference.is_file():
        raise Refusal(t("diff.no_reference", file=s.source("solutions")))
    if not mine.is_file():
        raise Refusal(t("diff.missing", file=s.source("exercises"), n=s.number))
    if not reveal:
        result = results([s], root)[s.number]
        if not result.ok:
            tally = (t("diff.tally_untestable") if result.problem
                     else t("diff.tally", passed=result.passed, total=result.total))
            raise Refusal(t("diff.not_yet", n=s.number, tally=tally))
    ours = mine.read_text(encoding="utf-8").splitlines(keepends=True)
    theirs = strip_markers(reference.read_text(encoding="utf-8")).splitlines(keepends=True)
    lines = list(difflib.unified_diff(ours, theirs, fromfile=t("diff.yours", file=s.source("exercises")),
                                      tofile=t("diff.reference", file=s.source("solutions"))))
    if not lines:
        say(style.green(f"{style.tick} {t('diff.identical', file=s.source('exercises'))}"))
    else:
        show_diff(lines, style)
    plus_equals_note(s, root, style)
    return 0


def plus_equals_note(s, root, style) -> None:
    """Under a stage that assigns on purpose (stages 2-5): the article's += is right
    too, and the learner's rules, if they add, are ready for the stage that needs it."""
    if "plus_equals" in s.feel:
        from autograd_kata.learner.feel import plus_equals
        for line in plus_equals(s, root):
            say(style.dim(line))


def show_diff(lines, style) -> int:
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith(("---", "+++")):
            line = style.bold(line)
        elif line.startswith("@@"):
            line = style.cyan(line)
        elif line.startswith("-"):
            line = style.red(line)
        elif line.startswith("+"):
            line = style.green(line)
        say(line)
    return 0


# --- reset ------------------------------------------------------------------

def confirm(question: str) -> bool:
    """Yes only for an answer that means yes in the learner's language or in English."""
    yes = {word.strip().lower() for said in (t("prompt.yes"), t_in("en", "prompt.yes")) for word in said.split(",")}
    try:
        return input(t("prompt.confirm", question=question)).strip().lower() in yes
    except EOFError:
        return False


def reset(stage: str, yes: bool = False) -> int:
    from autograd_kata.core.build import backup
    from autograd_kata.core.state import PristineMissing, pristine_stub, write_atomic
    root = find_root()
    s = stage_numbered(stage)
    path = root / s.source("exercises")
    try:
        stub = pristine_stub(s, root)
    except PristineMissing as problem:
        raise Refusal(t("reset.pristine_missing", problem=problem)) from None
    where = s.source("exercises")
    if path.is_file() and path.read_text(encoding="utf-8") == stub:
        say(t("reset.already", file=where, n=s.number))
        return 0
    if not yes:
        if not sys.stdin.isatty():
            raise Refusal(t("reset.no_terminal", file=where, n=s.number))
        if not confirm(t("reset.confirm", file=where, n=s.number)):
            say(t("reset.nothing_changed"))
            return 1
    if path.exists():
        saved = backup(path, root)  # raises if it cannot: then nothing is replaced
        say(t("reset.saved", file=where, saved=rel(saved, root)))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, stub)
    say(t("reset.restored", n=s.number, file=where))
    return 0


# --- watch ------------------------------------------------------------------

def watch(stage: str | None = None, poll: bool = False) -> int:
    from autograd_kata.learner.watch import watch as watch_files
    root = find_root()
    check_ids()
    s = stage_numbered(stage) if stage is not None else None
    return watch_files(root, s, poll=poll)
