"""Each stage's contract, broken clause by clause: the notes at the end of ``reference/engine.py``.

A stage test module's docstring states the stage's contract as named clauses (``- [name] what
holds``).  Each clause's smallest wrong implementations, and the other right ways to write what
the reference does, are maintainers' notes (``##`` lines, in no generated module) in the
engine's last section, a block per stage, in stage order::

    ## stage 1 contract, [data-is-a-float]: data-kept-as-given (a catalogue mistake)
    ## stage 1 contract, [data-is-a-float] data-truncated: keeps only the whole part, float(int(data))
    ##   says: a non-whole number is kept exactly
    ##   -        self.data = float(data)
    ##   +        self.data = float(int(data))
    ## stage 8 another right way, train-zeroes-by-hand: zeroes every grad itself
    ##   -        model.zero_grad()
    ##   +        for p in model.parameters():
    ##   +            p.grad = 0.0

An entry names catalogued mistakes (``autograd_kata/maintainer/mistakes.py``) or is an edit of
the stage's solutions module: ``says:`` the words the failing stage must print, ``-`` the
reference's lines it replaces (each exactly as in ``solutions/stageNN_*.py``, together found
once there), ``+`` the lines it writes instead.  Every other line of the section is prose for
the reader.  ``tooltests/test_contracts.py`` reads them (``read``) and makes each edit; it
lives here, not in ``tooltests/``, so that ``kata new-stage`` writes a new stage's block
(``placeholder_block``) in the same format the test reads.  Like the catalogue, this module
quotes the reference, so the wheel leaves it out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ENGINE = "reference/engine.py"
#: the section's heading line: every note below it, to the end of the file, is a contract's
HEADING = "## Each stage's contract, broken clause by clause"

#: ``## stage N contract, [clause]: ids (a catalogue mistake)``: catalogued mistakes
_CATALOGUED = re.compile(r"## stage (\d+) contract, \[([a-z0-9-]+)\]: ([a-z0-9-]+(?:, [a-z0-9-]+)*) "
                         r"\((?:a catalogue mistake|catalogue mistakes)\)")
#: ``## stage N contract, [clause] id: what the wrong code does``: an edit that breaks the clause
_BREAKER = re.compile(r"## stage (\d+) contract, \[([a-z0-9-]+)\] ([a-z0-9-]+): (\S.*)")
#: ``## stage N another right way, id: what the code does``: an edit the stage must pass
_RIGHT = re.compile(r"## stage (\d+) another right way, ([a-z0-9-]+): (\S.*)")
#: a line of the entry above: ``says: words``, ``-reference line``, ``+line written instead``
_PART = re.compile(r"##   (says: |-|\+)(.*)")


class NoteError(ValueError):
    """A line of the contract section that is not what its form says; the message names the line."""


@dataclass(frozen=True)
class Edit:
    """A change of one solutions module: what the learner wrote, and the words its stage must say."""
    id: str       # unique, the test's id
    stage: int
    says: str     # what the changed code does
    old: str      # whole lines of solutions/stageNN_*.py, found there exactly once
    new: str      # the lines written instead
    phrase: str   # the words the failing stage prints ("" for a right way: the stage passes)
    clause: str = ""  # the clause it breaks ("" for a right way)
    line: int = 0     # its note's line in reference/engine.py (0: made by code, no note)

    @property
    def note(self) -> str:
        """Where the edit is written down, for a failure message."""
        if not self.line:
            return f"the edit {self.id!r} (made in tooltests/test_contracts.py)"
        kind = f"contract, [{self.clause}]" if self.clause else "another right way,"
        return f"{ENGINE}:{self.line} (the note '## stage {self.stage} {kind} {self.id}')"


@dataclass
class Contracts:
    #: (stage, clause name) -> its smallest wrong implementations: catalogue ids and Edits, in note order
    clauses: dict[tuple[int, str], list[str | Edit]] = field(default_factory=dict)
    #: the other right ways: Edits the stage must pass
    right: list[Edit] = field(default_factory=list)
    #: (stage, clause name) -> the line of its first note
    lines: dict[tuple[int, str], int] = field(default_factory=dict)


def read(text: str) -> Contracts:
    """The contracts noted in the engine source ``text``; a malformed note raises NoteError."""
    lines = text.splitlines()
    try:
        start = lines.index(HEADING)
    except ValueError:
        raise NoteError(f"{ENGINE} has no line {HEADING!r}: the contracts' notes go below it, "
                        "at the end of the file") from None
    found = Contracts()
    pending: dict | None = None  # the edit whose lines are being read: Edit's fields so far
    last_stage = 0

    def close() -> None:
        nonlocal pending
        if pending is None:
            return
        where = f"{ENGINE}:{pending['line']}: {pending['id']}"
        if not pending["old"]:
            raise NoteError(f"{where} has no `##   -` line: the reference's lines it replaces")
        if pending["clause"] and not pending["phrase"]:
            raise NoteError(f"{where} has no `##   says:` line: the words its failing stage must print")
        edit = Edit(pending["id"], pending["stage"], pending["says"], "".join(pending["old"]),
                    "".join(pending["new"]), pending["phrase"], pending["clause"], pending["line"])
        if edit.clause:
            found.clauses.setdefault((edit.stage, edit.clause), []).append(edit)
        else:
            found.right.append(edit)
        pending = None

    for number, line in enumerate(lines[start + 1:], start + 2):
        if not line.startswith("##"):
            if line.strip():
                raise NoteError(f"{ENGINE}:{number}: {line!r} is code below {HEADING!r}: the contracts' "
                                "section ends the file, so the code goes above it")
            continue
        part = _PART.fullmatch(line)
        if part:
            if pending is None:
                raise NoteError(f"{ENGINE}:{number}: {line!r} belongs to no edit: write the edit's "
                                "'## stage N contract, [clause] id: ...' line above it")
            kind, rest = part.groups()
            if kind == "says: ":
                if pending["phrase"] or pending["old"] or not pending["clause"]:
                    raise NoteError(f"{ENGINE}:{number}: `says:` comes once, right after a breaker's first line")
                pending["phrase"] = rest
            elif kind == "-":
                if pending["new"]:
                    raise NoteError(f"{ENGINE}:{number}: a `-` line after a `+` line: the `-` lines come first")
                pending["old"].append(rest + "\n")
            else:
                pending["new"].append(rest + "\n")
            continue
        close()
        if not line.startswith("## stage ") or not line[len("## stage "):][:1].isdigit():
            continue  # prose
        catalogued, breaker, right = (form.fullmatch(line) for form in (_CATALOGUED, _BREAKER, _RIGHT))
        entry = catalogued or breaker or right
        if entry is None:
            raise NoteError(
                f"{ENGINE}:{number}: {line!r} is none of the note's forms: '## stage N contract, [clause]: "
                "id, id (catalogue mistakes)', '## stage N contract, [clause] id: what it does' or "
                "'## stage N another right way, id: what it does'")
        stage = int(entry.group(1))
        if stage < last_stage:
            raise NoteError(f"{ENGINE}:{number}: a note of stage {stage} after stage {last_stage}'s: "
                            "one block per stage, in stage order")
        last_stage = stage
        if catalogued:
            clause = catalogued.group(2)
            found.lines.setdefault((stage, clause), number)
            found.clauses.setdefault((stage, clause), []).extend(catalogued.group(3).split(", "))
        elif breaker:
            _, clause, id_, says = breaker.groups()
            found.lines.setdefault((stage, clause), number)
            pending = {"id": id_, "stage": stage, "says": says, "clause": clause, "line": number,
                       "phrase": "", "old": [], "new": []}
        elif right:
            _, id_, says = right.groups()
            pending = {"id": id_, "stage": stage, "says": says, "clause": "", "line": number,
                       "phrase": "", "old": [], "new": []}
    close()
    return found


def read_engine(root: Path) -> Contracts:
    return read((Path(root) / ENGINE).read_text(encoding="utf-8"))


def misplaced(edit: Edit, source: str, module: str) -> str:
    """Why ``edit`` cannot be made in ``source`` (the stage's solutions module, named ``module``),
    or "" when its ``-`` lines are there once, as whole lines."""
    found = source.count(edit.old)
    if found == 1 and (source.startswith(edit.old) or source[:source.index(edit.old)].endswith("\n")):
        return ""
    what = (f"its `-` lines are in {module} {found} times, not once" if found != 1 else
            f"its `-` lines are in {module} only as the end of a longer line")
    return (f"{edit.note}: {what}.  Make them the lines of {module} the edit replaces (kata build writes "
            f"it from {ENGINE}), copied exactly, whole lines, with enough lines around the change to make "
            f"them one place:\n{edit.old}")


def placeholder_block(number: int, placeholder: str) -> str:
    """The block ``kata new-stage`` appends for stage ``number``: a clause to name and break."""
    return (f"##\n## stage {number} contract, [first-clause] first-clause-broken: {placeholder}: what the "
            "wrong code does\n"
            f"##   says: {placeholder}: the words the failing stage prints\n"
            f"##   -{placeholder}: the reference's lines it replaces, exactly\n"
            f"##   +{placeholder}: the lines it writes instead\n")
