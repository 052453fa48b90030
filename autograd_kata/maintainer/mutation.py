"""The mutation gate: prove the stage tests catch every broken gradient rule.

mutmut (configured in ``[tool.mutmut]`` of pyproject.toml) makes small edits
to the reference in ``solutions/`` -- ``+=`` becomes ``=``, ``*`` becomes
``/``, ``1 - t * t`` becomes ``1 + t * t`` -- one at a time, and runs the
stage tests that reach the edited function against each.  A mutant the tests
do not notice ("survived") is a gradient rule the tests would let a learner
get wrong.  The bar is every mutant killed, in every stage module (the
carried-over copies of earlier stages included).  ``kata mutate --stage N``
gates one stage: mutmut runs only the mutants of stage N's module (a name
pattern, ``solutions.stageNN_<slug>.*``), which is what a change to one stage
needs; the full gate (every module) is what CI runs.

``gate(root)`` always starts from scratch: mutmut's cache keys on the source
and does not notice edited tests.  It prints killed / survived / timeout /
no tests per module, every survivor with its diff, and the wall time, and
returns non-zero unless every mutant was killed.  What the docs say of a run
is no part of the verdict: no figure of theirs can fail the gate.  A mutant that no test can
ever kill (an equivalent one) is better removed by rewriting the reference;
failing that, it is listed with its reason in ``autograd_kata/maintainer/equivalent_mutants.json``,
and only such a listed mutant may survive.  A listed entry that no longer
matches a survivor fails the gate too, so the list cannot go stale.

Top-level imports stay light: ``kata --help`` imports this module.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from autograd_kata.core.errors import Refusal
from autograd_kata.core.manifest import STAGES

EQUIVALENTS = "autograd_kata/maintainer/equivalent_mutants.json"
LOG = ".kata/mutation.log"

#: mutmut's words for a mutant's fate; only "killed" passes the gate.
KILLED = "killed"
COLUMNS = ("killed", "survived", "timeout", "no tests", "other")

#: Run mutmut's CLI in this interpreter (``python -m mutmut`` would re-execute
#: its ``__main__`` and warn).  Click reads the arguments after ``-c``.
_MUTMUT = (sys.executable, "-c", "from mutmut.__main__ import cli; cli()")


def _mutmut(args, root: Path, log=None, **kwargs):
    import subprocess
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("KATA_IMPL", None)  # [tool.mutmut] passes --impl solutions itself
    if log is not None:
        return subprocess.run([*_MUTMUT, *args], cwd=root, env=env, stdout=log,
                              stderr=subprocess.STDOUT, text=True, check=False, **kwargs)
    return subprocess.run([*_MUTMUT, *args], cwd=root, env=env, capture_output=True, text=True, check=False, **kwargs)


#: ``mutmut show NAME`` for many mutants in one process (each ``mutmut show``
#: costs a second of start-up); falls back to ``mutmut show`` one by one.
_SHOW_ALL = """
import json, sys
from mutmut.__main__ import cli  # noqa: F401 - sets mutmut up as its CLI does
from mutmut.mutation.diff_apply import find_mutant, get_diff_for_mutant
diffs = {}
for name in json.load(sys.stdin):
    diffs[name] = get_diff_for_mutant(name, path=find_mutant(name).path)
print(json.dumps(diffs))
"""


def _diffs(names, root: Path) -> dict[str, str]:
    import json
    import subprocess
    if not names:
        return {}
    done = subprocess.run([sys.executable, "-c", _SHOW_ALL], cwd=root, input=json.dumps(list(names)),
                          capture_output=True, text=True, check=False)
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        diffs = {}
        for name in names:
            shown = _mutmut(["show", name], root).stdout
            diffs[name] = shown.split("\n", 1)[1] if shown.startswith("#") else shown
        return diffs


def _log_tail(path: Path, lines: int = 40) -> str:
    """The end of mutmut's log without its progress spinner."""
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r", "\n")
    kept = [line for line in text.splitlines() if line.strip() and line.strip()[0] not in "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"]
    return "\n".join(kept[-lines:])


def module_of(mutant: str) -> str:
    """``solutions.stage04_tanh.xǁValueǁtanh__mutmut_3`` -> ``stage04_tanh``."""
    parts = mutant.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "solutions" else parts[0]


def function_of(mutant: str) -> str:
    """``solutions.stage04_tanh.xǁValueǁtanh__mutmut_3`` -> ``Value.tanh``."""
    mangled = mutant.split(".", 2)[-1].rsplit("__mutmut_", 1)[0]
    if mangled.startswith("xǁ"):
        return ".".join(p for p in mangled[2:].split("ǁ") if p)
    return mangled.removeprefix("x_")


def parse_results(text: str) -> dict[str, str]:
    """``mutmut results --all true`` output -> {mutant name: status}."""
    found = {}
    for line in text.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name.startswith("solutions."):
            found[name] = status.strip()
    return found


def column(status: str) -> str:
    return status if status in COLUMNS else "other"


def changed_lines(diff: str) -> tuple[list[str], list[str]]:
    """The removed and the added lines of a unified diff, stripped."""
    lines = [line for line in diff.splitlines() if not line.startswith(("---", "+++"))]
    return ([line[1:].strip() for line in lines if line.startswith("-")],
            [line[1:].strip() for line in lines if line.startswith("+")])


def load_equivalents(root: Path) -> list[dict]:
    """The reviewed list: [{"module", "function", "from", "to", "reason"}, ...]."""
    import json
    path = root / EQUIVALENTS
    if not path.exists():
        return []
    entries = json.loads(path.read_text(encoding="utf-8"))
    for e in entries:
        missing = {"module", "function", "from", "to", "reason"} - set(e)
        if missing:
            raise ValueError(f"{EQUIVALENTS}: entry {e!r} lacks {', '.join(sorted(missing))}")
    return entries


def matches(entry: dict, mutant: str, diff: str) -> bool:
    removed, added = changed_lines(diff)
    return (module_of(mutant) == entry["module"] and function_of(mutant) == entry["function"]
            and entry["from"].strip() in removed and entry["to"].strip() in added)


def table(statuses: dict[str, str], stages=STAGES) -> list[list]:
    """One row per stage module of ``stages`` (and a total): module, then a count per column, then total."""
    rows: list[list] = []
    for s in stages:
        counts = dict.fromkeys(COLUMNS, 0)
        for name, status in statuses.items():
            if module_of(name) == s.module:
                counts[column(status)] += 1
        rows.append([s.module, *counts.values(), sum(counts.values())])
    rows.append(["total", *(sum(r[i] for r in rows) for i in range(1, len(COLUMNS) + 2))])
    return rows


def pattern(number: int) -> str:
    """The mutmut name pattern of stage ``number``'s mutants: every function of its module."""
    from autograd_kata.core.manifest import stage
    return f"solutions.{stage(number).module}.*"


def gate(root, out=print, max_children: int = 2, stage: int | None = None) -> int:
    """Run mutmut from scratch on ``solutions/`` (only stage ``stage``'s module when given);
    0 only if every mutant run is killed."""
    import json
    import shutil
    import time
    root = Path(root)
    from importlib.util import find_spec
    if find_spec("mutmut") is None:
        raise Refusal("mutation gate: mutmut is not installed; pip install -e '.[dev]'", 2, where=None)
    try:
        equivalents = load_equivalents(root)
    except ValueError as error:  # json.JSONDecodeError is a ValueError
        raise Refusal(f"mutation gate: {error}", 2, where=None) from None

    shutil.rmtree(root / "mutants", ignore_errors=True)  # its cache does not notice test edits
    log_path = root / LOG
    log_path.parent.mkdir(parents=True, exist_ok=True)
    from autograd_kata.core.manifest import stage as stage_of
    chosen = STAGES if stage is None else (stage_of(stage),)
    names = [] if stage is None else [pattern(stage)]
    where = "solutions/" if stage is None else f"stage {stage} ({' '.join(names)})"
    out(f"mutation gate: mutmut run --max-children {max_children} on {where} "
        f"(from scratch; log in {LOG}) ...")
    start = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log:
        run = _mutmut(["run", "--max-children", str(max_children), *names], root, log=log)
    wall = time.monotonic() - start
    results = _mutmut(["results", "--all", "true"], root)
    modules = {s.module for s in chosen}
    statuses = {name: status for name, status in parse_results(results.stdout).items()
                if module_of(name) in modules}
    if run.returncode != 0 or not statuses:
        out(_log_tail(log_path))
        out(f"mutation gate: mutmut run failed (exit {run.returncode}) after {wall:.0f} s; see {LOG}")
        return 1
    _mutmut(["export-cicd-stats"], root)
    stats_file = root / "mutants" / "mutmut-cicd-stats.json"
    stats = json.loads(stats_file.read_text()) if stats_file.exists() else {}

    out("")
    out(f"{'module':<22}" + "".join(f"{c:>10}" for c in (*COLUMNS, "total")))
    for row in table(statuses, chosen):
        out(f"{row[0]:<22}" + "".join(f"{n:>10}" for n in row[1:]))
    if stage is None and stats and stats.get("total") != len(statuses):
        out(f"(mutmut's own count is {stats.get('total')} mutants: "
            f"{stats.get('killed')} killed, {stats.get('survived')} survived)")

    unkilled = {name: status for name, status in statuses.items() if status != KILLED}
    reviewed, failing = [], []
    used = set()
    diffs = _diffs(sorted(unkilled), root)
    for name, status in sorted(unkilled.items()):
        diff = diffs.get(name, "")
        entry = next((i for i, e in enumerate(equivalents) if matches(e, name, diff)), None)
        if entry is None:
            failing.append((name, status, diff))
        else:
            used.add(entry)
            reviewed.append((name, equivalents[entry]["reason"]))
    stale = [e for i, e in enumerate(equivalents) if i not in used and e["module"] in modules]

    for name, status, diff in failing:
        out("")
        out(f"{status.upper()}: {name}  ({module_of(name)}, {function_of(name)})")
        out(diff.rstrip())
    for name, reason in reviewed:
        out(f"reviewed equivalent, allowed to survive: {name}: {reason}")
    for e in stale:
        out(f"{EQUIVALENTS}: no surviving mutant matches {e['module']} {e['function']}: "
            f"{e['from']!r} -> {e['to']!r}; remove the entry")

    total = len(statuses)
    killed = total - len(unkilled)
    out("")
    out(f"mutation gate: {killed}/{total} mutants killed ({100.0 * killed / total:.1f} %), "
        f"{len(reviewed)} reviewed equivalent, wall time {wall:.0f} s ({wall / 60:.1f} min, "
        f"{max_children} workers)")
    if failing or stale:
        out(f"mutation gate: FAILED ({len(failing)} mutant(s) not killed"
            f"{f', {len(stale)} stale entries' if stale else ''}). Add a test that tells the "
            f"broken rule apart, or rewrite the reference so the mutation no longer exists.")
        return 1
    out("mutation gate: passed, every mutant of the reference is killed." if stage is None else
        f"mutation gate: passed, every mutant of stage {stage} is killed.")
    return 0


def mutate_command(max_children: int = 2, stage: str | None = None) -> int:
    """``kata mutate [--stage N] [--max-children N]``."""
    from autograd_kata.core.manifest import find_root
    from autograd_kata.core.manifest import stage as stage_of
    number = None if stage is None else stage_of(stage).number  # an unknown stage: a Refusal naming the valid
    return gate(find_root(), max_children=max_children, stage=number)
