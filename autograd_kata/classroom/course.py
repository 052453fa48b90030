"""``kata grade --class``: a whole course, graded, kept and summed up honestly.

One folder per student in the class folder (hidden folders skipped).  Each is
graded by ``grade.grade`` in its own worker **process** (``--workers``,
default: the CPUs this process may use), because a grading ends by killing
every descendant of its process: two gradings must never share a process.
Each sandbox has a uid of its own (as root, a lease on a user of the pool,
``pool.py``), so gradings run side by side.  Each worker's grading shares its
stages among ``CPUs // workers`` judges.

Only this process writes, as each student finishes:

* ``OUT.reports/<student>.json``: the instructor's report (``Report.to_dict``,
  with the hidden seed) plus a ``course`` record: the hash of the student's
  stage files and of the grader's tests (a rerun skips a student whose two
  hashes are unchanged; ``--force`` regrades), each stage's status and the
  classic mistakes its failures name;
* ``OUT.reports/<student>.txt``: the same report as a table, in ``--lang``;
* ``OUT`` (the CSV, UTF-8 with a byte-order mark so Excel reads Japanese names),
  rewritten whole after every student from every record so far, so an
  interrupted run leaves a correct CSV of the students done and a rerun resumes;
* ``OUT.summary.txt`` at the end, computed from the records alone (so
  ``--merge`` recomputes it from shards' records).

``--seed S`` grades every student with hidden seed S and writes the reports
without timings: the same files, byte for byte, on every run.  ``--shard K/N``
grades the students whose name hashes to K of N (stable, whatever the order or
the other folders); ``--merge`` joins shards' CSVs, records and reports.
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
import shutil
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from autograd_kata import __version__
from autograd_kata.classroom.formats import render
from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t_in
from autograd_kata.core.manifest import STAGES, Stage
from autograd_kata.core.manifest import stage as stage_by_number
from autograd_kata.core.mistakes import PHRASES, label, named_in

# a stage's status in the summary, in the summary's order
STATUSES = ("passed", "failed", "not_started", "no_import", "hangs", "crashes", "no_file")
SHARD_ENV = ("JOB_COMPLETION_INDEX", "KATA_SHARD_INDEX")  # Kubernetes Indexed Job (0-based), ours (1-based)



# --- the students --------------------------------------------------------------------

def students(class_dir: Path) -> list[Path]:
    """One folder per student (hidden folders skipped), alphabetical."""
    return sorted(p for p in Path(class_dir).iterdir() if p.is_dir() and not p.name.startswith("."))


def parse_shard(text: str | None, env=os.environ) -> tuple[int, int] | None:
    """``K/N`` (1-based), or ``N`` alone with K from ``JOB_COMPLETION_INDEX`` (a
    Kubernetes Indexed Job's, 0-based) or ``KATA_SHARD_INDEX`` (1-based, e.g. an
    Actions matrix value)."""
    if not text:
        return None
    k_text, slash, n_text = text.partition("/")
    if not slash:
        k_text, n_text = "", text
    try:
        n = int(n_text)
        if k_text:
            k = int(k_text)
        elif env.get("JOB_COMPLETION_INDEX", "").strip():
            k = int(env["JOB_COMPLETION_INDEX"]) + 1
        elif env.get("KATA_SHARD_INDEX", "").strip():
            k = int(env["KATA_SHARD_INDEX"])
        else:
            raise Refusal(f"--shard {text}: give K/N, or set JOB_COMPLETION_INDEX (0-based) or "
                          f"KATA_SHARD_INDEX (1-based)", code=2, where="grade --shard")
    except ValueError:
        raise Refusal(f"--shard {text}: expected K/N, two whole numbers", code=2, where="grade --shard") from None
    if not 1 <= k <= n:
        raise Refusal(f"--shard {k}/{n}: K must be from 1 to N", code=2, where="grade --shard")
    return k, n


def shard_of(name: str, n: int) -> int:
    """The shard (1..n) of a student: a hash of the name, so it never depends on who else is there."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % n + 1


def in_shard(name: str, shard: tuple[int, int] | None) -> bool:
    return shard is None or shard_of(name, shard[1]) == shard[0]


# --- what a grading depends on ---------------------------------------------------------

def files_hash(submission: Path, stages) -> str:
    """Every candidate file of every graded stage (its path and bytes): what the grading reads."""
    from autograd_kata.classroom.grade import find_stage_files

    h = hashlib.sha256()
    for s in stages:
        for path in find_stage_files(submission, s):
            h.update(f"{s.number}\0{path.relative_to(submission).as_posix()}\0".encode())
            try:
                h.update(hashlib.sha256(path.read_bytes()).digest() if path.is_file() else b"?")
            except OSError:
                h.update(b"!")
    return h.hexdigest()


def tests_hash(grader_root: Path) -> str:
    """The grader's tests/, conftest.py, pyproject.toml and the kata's version."""
    root = Path(grader_root)
    h = hashlib.sha256(__version__.encode())
    paths = [p for p in sorted((root / "tests").rglob("*.py")) if "__pycache__" not in p.parts]
    paths += [root / name for name in ("conftest.py", "pyproject.toml") if (root / name).is_file()]
    for path in paths:
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _normal(text: bytes) -> bytes:
    return b"\n".join(line.rstrip() for line in text.replace(b"\r\n", b"\n").split(b"\n")).strip()


def stubs(grader_root: Path, stages) -> dict[int, bytes]:
    """The released stub of each stage (exercises/ of the grader, else .kata-pristine/), normalized."""
    found = {}
    for s in stages:
        for base in ("", ".kata-pristine/"):
            path = Path(grader_root) / (base + s.source("exercises"))
            if path.is_file():
                found[s.number] = _normal(path.read_bytes())
                break
    return found


def stage_status(g, submission: Path, stub: bytes | None) -> str:
    """One word for a stage: passed, no_file, not_started (the untouched stub),
    no_import, hangs, crashes or failed."""
    if g.ok:
        return "passed"
    if not g.source:
        return "no_file"
    try:
        if stub is not None and _normal((submission / g.source).read_bytes()) == stub:
            return "not_started"
    except OSError:
        pass
    kinds = [t.kind for t in g.tests if t.status != "passed"]  # data the judge wrote, not its words
    if "import" in kinds:
        return "no_import"
    if "hang" in kinds or g.reason_kind == "hang":
        return "hangs"
    if "crash" in kinds or g.reason_kind == "crash":
        return "crashes"
    return "failed"


def stage_mistakes(g, status: str) -> list[str]:
    """The classic mistakes (their phrases) a failed stage's messages name; none for a stage
    not started (stage 6's stub is the naive = code: it is no one's mistake) or not importing."""
    if status in ("passed", "no_file", "not_started", "no_import"):
        return []
    text = "\n".join([g.reason] + [t.message for t in g.tests if t.status != "passed"])
    return sorted(phrase for _, phrase in named_in(text, g.stage.number))


def record(name: str, report, submission: Path, stages, files: str, tests: str, stub: dict,
           seed: int | None) -> dict:
    """What the course keeps of one student's grading (the ``course`` part of its JSON)."""
    status, mistakes = {}, {}
    for g in report.stages:
        status[str(g.stage.number)] = stage_status(g, submission, stub.get(g.stage.number))
        found = stage_mistakes(g, status[str(g.stage.number)])
        if found:
            mistakes[str(g.stage.number)] = found
    by = {g.stage.number: g.score for g in report.stages}
    return {"student": name, "files": files, "tests": tests, "stages": [s.number for s in stages],
            "seed": seed, "scores": {str(s.number): by.get(s.number, 0) for s in stages},
            "score": report.score, "max_score": report.max_score, "isolated": report.isolated,
            "isolation": report.isolation, "status": status, "mistakes": mistakes}


# --- the files next to the CSV -------------------------------------------------------

def reports_dir(out: Path) -> Path:
    return out.with_name(out.stem + ".reports")


def summary_path(out: Path) -> Path:
    return out.with_name(out.stem + ".summary.txt")


def safe_name(name: str) -> str:
    """A student's folder name as a file name (it already is one; no path tricks)."""
    return name.replace("/", "_").replace("\\", "_").lstrip(".") or "_"


def _write(path: Path, text: str, encoding: str = "utf-8") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(text, encoding=encoding, newline="")
    os.replace(partial, path)  # whole or not at all


def write_student(folder: Path, name: str, report, course: dict, lang: str, timed: bool = True) -> None:
    data = {**json.loads(render(report, "json", lang, timed)), "course": course}
    base = safe_name(name)
    _write(folder / (base + ".json"), json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    _write(folder / (base + ".txt"), render(report, "text", lang, timed))


def load_record(folder: Path, name: str) -> dict | None:
    try:
        data = json.loads((folder / (safe_name(name) + ".json")).read_text(encoding="utf-8"))
        course = data["course"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return course if isinstance(course, dict) and course.get("student") == name else None


def class_csv(records: list[dict], stages) -> str:
    """The CSV, students alphabetical: per-stage points, total and max. Starts with a
    byte-order mark (Excel then reads UTF-8: Japanese names)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student"] + [f"stage{s.number}" for s in stages] + ["total", "max"])
    for r in sorted(records, key=lambda r: r["student"]):
        name = r["student"]
        cell = "'" + name if name[:1] in ("=", "+", "-", "@", "\t", "\r") else name  # never a formula
        writer.writerow([cell] + [r["scores"].get(str(s.number), 0) for s in stages] + [r["score"], r["max_score"]])
    return "\ufeff" + out.getvalue()


def read_csv_students(path: Path) -> list[str]:
    text = Path(path).read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or rows[0][:1] != ["student"]:
        raise Refusal(f"{path} is not a kata grade --class CSV (no 'student' header)", code=2, where="grade --merge")
    return [row[0][1:] if row[0][:1] == "'" else row[0] for row in rows[1:] if row]


# --- the summary ----------------------------------------------------------------------

def class_summary(records: list[dict], stages, lang: str = "en") -> str:
    """Per stage, every status with its students; then every classic mistake the failures
    name, with the number and the names of the students who made it."""
    records = sorted(records, key=lambda r: r["student"])
    n = len(records)
    say = lambda msgid, **f: t_in(lang, msgid, **f)  # noqa: E731
    lines = []
    if records and not records[0].get("isolated", True):
        lines.append(records[0].get("isolation", ""))
    lines += [say("summary.title", n=n, stages=", ".join(str(s.number) for s in stages)), ""]
    for s in stages:
        who = {status: [r["student"] for r in records if r["status"].get(str(s.number)) == status]
               for status in STATUSES}
        passed = len(who["passed"])
        rate = f"{100 * passed / n:.0f}%" if n else "-"
        lines.append(say("summary.stage", n=s.number, title=t_in(lang, f"title.stage{s.number}"),
                         passed=passed, total=n, rate=rate))
        for status in STATUSES:
            if who[status]:
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


# --- grading a class ---------------------------------------------------------------------

def _grade_in_worker(folder, grader_root, stages, stage_timeout, jobs, seed):
    """In a worker process (its own subreaper and its own end-of-grading kills)."""
    from autograd_kata.classroom.grade import grade
    return grade(Path(folder), Path(grader_root), stages, stage_timeout=stage_timeout, jobs=jobs, seed=seed)


def _pool(workers: int, in_process: bool):
    if in_process:
        return ThreadPoolExecutor(max_workers=workers)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))


def default_workers() -> int:
    """The CPUs this process may use: one student per CPU, each with one judge (every
    sandbox has a uid of its own, so gradings never wait for each other)."""
    from autograd_kata.classroom.grade import jobs_default
    return jobs_default()


def cpus() -> int:
    from autograd_kata.classroom.grade import jobs_default
    return jobs_default()


@dataclasses.dataclass
class Course:
    """One ``--class`` run: where it reads, where it writes, and how."""
    class_dir: Path
    grader_root: Path
    out: Path
    stages: tuple = STAGES
    stage_timeout: float = 30.0
    workers: int | None = None
    jobs: int | None = None
    seed: int | None = None
    force: bool = False
    only: str | None = None          # --student NAME
    shard: tuple[int, int] | None = None
    lang: str = "en"
    grade_one: object = None         # a stand-in for grade.grade (tests); run in threads

    def roster(self) -> list[Path]:
        return [p for p in students(self.class_dir) if in_shard(p.name, self.shard)]

    def run(self, progress=None) -> list[dict]:
        """Grade who needs it; return every record of the roster, written as they finish."""
        roster = self.roster()
        if self.only is not None and self.only not in {p.name for p in roster}:
            where = f" (shard {self.shard[0]}/{self.shard[1]})" if self.shard else ""
            raise Refusal(f"no student folder {self.only!r} in {self.class_dir}{where}", code=2,
                          where="grade --student")
        folder = reports_dir(self.out)
        folder.mkdir(parents=True, exist_ok=True)
        tests = tests_hash(self.grader_root)
        stub = stubs(self.grader_root, self.stages)
        numbers = [s.number for s in self.stages]
        records: dict[str, dict] = {}
        todo = []
        for p in roster:
            files = files_hash(p, self.stages)
            old = load_record(folder, p.name)
            fresh = (old is not None and old.get("files") == files and old.get("tests") == tests
                     and old.get("stages") == numbers and (self.seed is None or old.get("seed") == self.seed))
            if self.only is not None:
                if p.name != self.only:
                    if old is not None and old.get("stages") == numbers:
                        records[p.name] = old  # kept as it was graded
                    continue
                fresh = False
            if fresh and not self.force and old is not None:
                records[p.name] = old
                if progress:
                    progress(p.name, old, True)
            else:
                todo.append((p, files))
        self._write_csv(records)
        workers = max(1, min(self.workers or default_workers(), len(todo) or 1))
        jobs = self.jobs or max(1, cpus() // workers)
        with _pool(workers, self.grade_one is not None) as pool:
            running: dict[Future, tuple[Path, str]] = {}
            for p, files in todo:
                if self.grade_one is not None:
                    f = pool.submit(self.grade_one, p, self.grader_root, self.stages,
                                    stage_timeout=self.stage_timeout, jobs=jobs, seed=self.seed)
                else:
                    f = pool.submit(_grade_in_worker, str(p), str(self.grader_root), list(self.stages),
                                    self.stage_timeout, jobs, self.seed)
                running[f] = (p, files)
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in sorted(done, key=lambda f: f.exception() is not None):  # write who finished, then raise
                    p, files = running.pop(f)
                    report = f.result()
                    course = record(p.name, report, p, self.stages, files, tests, stub, self.seed)
                    write_student(folder, p.name, report, course, self.lang, timed=self.seed is None)
                    records[p.name] = course
                    self._write_csv(records)
                    if progress:
                        progress(p.name, course, False)
        return [records[name] for name in sorted(records)]

    def _write_csv(self, records: dict) -> None:
        _write(self.out, class_csv(list(records.values()), self.stages))

    def write_summary(self, records: list[dict]) -> str:
        text = class_summary(records, self.stages, self.lang)
        _write(summary_path(self.out), text)
        return text


def grade_class(class_dir: Path, grader_root: Path, out: Path, stages=STAGES, progress=None, **options):
    """Grade a class into ``out`` (CSV), its reports folder and summary; the records."""
    course = Course(Path(class_dir), Path(grader_root), Path(out), tuple(stages), **options)
    records = course.run(progress)
    course.write_summary(records)
    return records


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
    _write(out, class_csv(merged, stages))
    _write(summary_path(out), class_summary(merged, stages, lang))
    return merged


def stages_of(records: list[dict]) -> tuple[Stage, ...]:
    return tuple(stage_by_number(n) for n in records[0]["stages"]) if records else STAGES
