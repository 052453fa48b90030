"""A course's files (the class outputs): next to the CSV ``OUT``, ``OUT.reports/<student>.json``
and ``.txt`` (each written whole or not at all), the CSV itself (with a byte-order mark,
for Excel), ``OUT.summary.txt`` computed from the records alone, and ``--merge``, which
joins shards' CSVs, records and reports."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

from autograd_kata.classroom.course.records import STATUSES
from autograd_kata.classroom.grading.discovery import shown, unshown
from autograd_kata.classroom.grading.formats import render, write_whole
from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import Text, t_in
from autograd_kata.core.manifest import STAGES
from autograd_kata.core.manifest import stage as stage_by_number
from autograd_kata.core.mistakes import PHRASES, label


def reports_dir(out: Path) -> Path:
    return out.with_name(out.stem + ".reports")


def summary_path(out: Path) -> Path:
    return out.with_name(out.stem + ".summary.txt")


# what folder_key writes as %XX: a character no file name or spreadsheet cell may hold as it is
_UNSAFE = re.compile("[%/\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]|^[.=+\\-@']")


def folder_key(name: str) -> str:
    """The folder a student's name (``roster.name_of``) was made from, one to one and safe as a
    file name and as a CSV cell: ``%``, ``/``, ``\\``, control characters, bytes that were not
    UTF-8 and a first ``.``, ``=``, ``+``, ``-``, ``@`` or ``'`` written as URL escapes (``%XX``
    of its UTF-8 bytes), the rest as it is: ``urllib.parse.unquote(key, errors="surrogateescape")``
    gives the folder's name back (the CSV's ``folder`` column; docs/instructors.md)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8", "surrogateescape")),
                       unshown(name))


def safe_name(name: str) -> str:
    """A student's report files' name: their ``folder_key``, one to one (``a\\b`` and ``a_b``
    never share a report); a key too long for a file name cut and told apart by a hash of the whole."""
    base = folder_key(name) or "%"
    if len(base.encode("utf-8", "surrogateescape")) > 180:
        base = base[:60] + "~" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return base


def write_student(folder: Path, name: str, report, course: dict, lang: str, timed: bool = True) -> None:
    data = {**json.loads(render(report, "json", lang, timed)), "course": course}
    base = safe_name(name)
    write_whole(folder / (base + ".txt"), render(report, "text", lang, timed))
    # the record last: a student with one (a rerun keeps them) has both files
    write_whole(folder / (base + ".json"), json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def load_record(folder: Path, name: str) -> dict | None:
    try:
        data = json.loads((folder / (safe_name(name) + ".json")).read_text(encoding="utf-8"))
        course = data["course"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return course if isinstance(course, dict) and course.get("student") == name else None


def class_csv(records: list[dict], stages) -> str:
    """The CSV, students alphabetical: per-stage points, total, max and the student's
    ``folder_key`` (what a roster joins on). Starts with a byte-order mark (Excel then reads
    UTF-8: Japanese names)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student"] + [f"stage{s.number}" for s in stages] + ["total", "max", "folder"])
    for r in sorted(records, key=lambda r: r["student"]):
        name = r["student"]
        # never a formula; a name starting with ' gets one too, so reading it back (one ' off) gives the name
        cell = "'" + name if name[:1] in ("=", "+", "-", "@", "\t", "\r", "'") else name
        writer.writerow([cell] + [r["scores"].get(str(s.number), 0) for s in stages]
                        + [r["score"], r["max_score"], folder_key(name)])
    return "\ufeff" + out.getvalue()


def read_csv_students(path: Path) -> list[str]:
    text = Path(path).read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or rows[0][:1] != ["student"]:
        raise Refusal(f"{path} is not a kata grade --class CSV (no 'student' header)", code=2, where="grade --merge")
    if "folder" in rows[0]:  # the stated key, read back to the name (shown: one line, as every output says it)
        at = rows[0].index("folder")
        return [shown(unquote(row[at], errors="surrogateescape")) for row in rows[1:] if row]
    return [row[0][1:] if row[0][:1] == "'" else row[0] for row in rows[1:] if row]  # an older CSV


# --- the summary ----------------------------------------------------------------------

def _said_again(data, lang: str) -> str:
    try:
        return Text.load(data, lang) if data else ""
    except ValueError:
        return ""


def class_summary(records: list[dict], stages, lang: str = "en") -> str:
    """Per stage, every status with its students; then every classic mistake the failures
    name, with the number and the names of the students who made it."""
    records = sorted(records, key=lambda r: r["student"])
    n = len(records)
    say = lambda msgid, **f: t_in(lang, msgid, **f)  # noqa: E731
    lines = []
    if records and not records[0].get("isolated", True):
        lines.append(_said_again(records[0].get("isolation_said"), lang) or records[0].get("isolation", ""))
    lines += [say("summary.title", n=n, stages=", ".join(str(s.number) for s in stages)), ""]
    for s in stages:
        who = {status: [r["student"] for r in records if r["status"].get(str(s.number)) == status]
               for status in STATUSES}
        passed = len(who["passed"])
        rate = f"{100 * passed / n:.0f}%" if n else "-"
        lines.append(say("summary.stage", n=s.number, title=t_in(lang, s.title_id),
                         passed=passed, total=n, rate=rate))
        for status in STATUSES:
            if status == "misnamed" and who[status]:  # each with the files seen, and the name to give them
                seen = {r["student"]: r.get("misnamed", {}).get(str(s.number), []) for r in records}
                lines.append(say("summary.status_line", count=len(who[status]),
                                 status=say("summary.status.misnamed", name=f"{s.module}.py"),
                                 names=", ".join(say("summary.misnamed_who", name=name, files=", ".join(seen[name]))
                                                 for name in who[status])))
            elif who[status]:
                lines.append(say("summary.status_line", status=say(f"summary.status.{status}"),
                                 count=len(who[status]), names=", ".join(who[status])))
    lines += ["", say("summary.mistakes")]
    named: dict[tuple[int, str], list[str]] = {}
    for r in records:
        for number, phrases in r.get("mistakes", {}).items():
            for phrase in phrases:
                named.setdefault((int(number), phrase), []).append(r["student"])
    order = {(s, p): i for i, (s, p, _) in enumerate(PHRASES)}
    ranked = sorted(named.items(), key=lambda kv: (-len(kv[1]), kv[0][0], order.get(kv[0], 1 << 30)))
    if not ranked:
        lines.append(say("summary.no_mistakes"))
    for (number, phrase), names in ranked:
        lines.append(say("summary.mistake_line", stage=number, label=label(number, phrase, lang),
                         count=len(names), names=", ".join(names)))
    return "\n".join(lines) + "\n"


# --- shards, merged -----------------------------------------------------------------------

def merge(shard_csvs: list[Path], out: Path, lang: str = "en") -> list[dict]:
    """Join shards' CSVs into ``out``: every student's record and reports copied next to it,
    the CSV and the summary recomputed from the records. Refuses a student in two shards,
    a record missing, or shards graded on different stages."""
    if not shard_csvs:
        raise Refusal("give the shards' CSVs: --merge A.csv B.csv ... --out ALL.csv", code=2, where="grade --merge")
    out = Path(out)
    if any(Path(p).resolve() == out.resolve() for p in shard_csvs):
        raise Refusal(f"--out {out} is one of the shards", code=2, where="grade --merge")
    records: dict[str, tuple[dict, Path]] = {}
    numbers = None
    for path in map(Path, shard_csvs):
        if not path.is_file():
            raise Refusal(f"{path} is not a file", code=2, where="grade --merge")
        for name in read_csv_students(path):
            r = load_record(reports_dir(path), name)
            if r is None:
                raise Refusal(f"{path}: no report for {name} in {reports_dir(path)}", code=2, where="grade --merge")
            if name in records:
                raise Refusal(f"{name} is in {records[name][1]} and {path}", code=2, where="grade --merge")
            if numbers is None:
                numbers = r["stages"]
            elif r["stages"] != numbers:
                raise Refusal(f"{path}: {name} was graded on stages {r['stages']}, the others on {numbers}",
                              code=2, where="grade --merge")
            records[name] = (r, path)
    stages = tuple(stage_by_number(n) for n in (numbers or [s.number for s in STAGES]))
    folder = reports_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    for name, (_, path) in records.items():
        for suffix in (".json", ".txt"):
            source = reports_dir(path) / (safe_name(name) + suffix)
            if source.is_file():
                shutil.copyfile(source, folder / source.name)
    merged = [records[name][0] for name in sorted(records)]
    write_whole(out, class_csv(merged, stages))
    write_whole(summary_path(out), class_summary(merged, stages, lang))
    return merged
