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

A student the grader failed on (``report.GRADER``: a judge that died, a grader that cannot
load its tests) is written as not graded, never 0, and graded again by the next run.
SIGINT or SIGTERM (to this process or its group) stops the run within seconds: the
workers ignore both, this process kills them and everything they started, and every
student who finished is already written (``Interrupted``; the command exits 130 or 143).

``--seed S`` grades every student with hidden seed S and writes the reports
without timings: the same files, byte for byte, on every run.  ``--shard K/N``
grades the students whose name hashes to K of N (stable, whatever the order or
the other folders); ``--merge`` joins shards' CSVs, records and reports.

The steps, one module each: ``roster`` (who), ``grade`` (one student, in a worker),
``records`` (what is kept of a grading), ``class_outputs`` (the files, the summary and
``--merge``); this module runs them.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import threading
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Future, ThreadPoolExecutor, wait
from pathlib import Path

from autograd_kata.classroom.course.outputs import (
    class_csv,
    class_summary,
    load_record,
    reports_dir,
    summary_path,
    write_student,
    write_whole,
)
from autograd_kata.classroom.course.records import files_hash, own_failure, record, stubs, tests_hash
from autograd_kata.classroom.course.roster import in_shard, name_of, students
from autograd_kata.classroom.grading.grade import grade, jobs_default, not_graded
from autograd_kata.classroom.sandbox import jail
from autograd_kata.core.errors import Refusal
from autograd_kata.core.manifest import STAGES


def _grade_in_worker(folder, grader_root, stages, stage_timeout, jobs, seed):
    """In a worker process (its own subreaper and its own end-of-grading kills)."""
    return grade(Path(folder), Path(grader_root), stages, stage_timeout=stage_timeout, jobs=jobs, seed=seed)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped a ``--class`` run; ``signum`` says which."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _worker_start() -> None:
    """A worker ignores SIGINT and SIGTERM (Ctrl-C reaches the whole group): the main process
    decides, and ends the workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _pool(workers: int, in_process: bool):
    if in_process:
        return ThreadPoolExecutor(max_workers=workers)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start)


class _Stops:
    """SIGINT and SIGTERM become ``Interrupted`` in the main thread, never while a student's
    files are being written (then right after)."""

    def __init__(self):
        self.signum, self.writing, self.old = None, False, {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.old[sig] = signal.signal(sig, self._caught)
        return self

    def __exit__(self, *exc):
        for sig, handler in self.old.items():
            signal.signal(sig, handler)

    def _caught(self, signum, frame):
        self.signum = signum
        if not self.writing:
            raise Interrupted(signum)

    def check(self) -> None:
        if self.signum is not None:
            raise Interrupted(self.signum)


def _stop(pool) -> None:
    """End every worker and whatever it started (judges, sandboxes) now; pending gradings are dropped."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    jail.kill_descendants()  # this process is a subreaper: the workers' orphans came back to it
    if jail.is_root():
        from autograd_kata.classroom.sandbox import pool as sandbox_pool
        sandbox_pool.sweep()
    pool.shutdown(wait=False, cancel_futures=True)


def default_workers() -> int:
    """The CPUs this process may use: one student per CPU, each with one judge (every
    sandbox has a uid of its own, so gradings never wait for each other)."""
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
        return [p for p in students(self.class_dir) if in_shard(name_of(p), self.shard)]

    def run(self, progress=None) -> list[dict]:
        """Grade who needs it; return every record of the roster, written as they finish."""
        roster = self.roster()
        if self.only is not None and self.only not in {name_of(p) for p in roster}:
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
            old = load_record(folder, name_of(p))
            fresh = (old is not None and old.get("files") == files and old.get("tests") == tests
                     and old.get("stages") == numbers and (self.seed is None or old.get("seed") == self.seed)
                     and old.get("graded", True) is not False)  # a grader's failure is graded again
            if self.only is not None:
                if name_of(p) != self.only:
                    if old is not None and old.get("stages") == numbers:
                        records[name_of(p)] = old  # kept as it was graded
                    continue
                fresh = False
            if fresh and not self.force and old is not None:
                records[name_of(p)] = old
                if progress:
                    progress(name_of(p), old, True)
            else:
                todo.append((p, files))
        self._write_csv(records)
        workers = max(1, min(self.workers or default_workers(), len(todo) or 1))
        jobs = self.jobs or max(1, jobs_default() // workers)
        jail.become_subreaper()  # what a killed worker started comes back here, to be ended
        with _Stops() as stops:
            pool = _pool(workers, self.grade_one is not None)
            try:
                self._grade(pool, todo, jobs, folder, tests, stub, records, stops, progress)
            except BaseException:
                _stop(pool)
                raise
            pool.shutdown(wait=True)
        return [records[name] for name in sorted(records)]

    def _grade(self, pool, todo, jobs, folder, tests, stub, records, stops, progress) -> None:
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
            done, _ = wait(running, timeout=0.5, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=lambda f: f.exception() is not None):  # write who finished, then raise
                p, files = running.pop(f)
                stops.writing = True
                try:
                    records[name_of(p)] = self._keep(folder, p, files, f, tests, stub)
                    self._write_csv(records)
                finally:
                    stops.writing = False
                stops.check()
                if progress:
                    progress(name_of(p), records[name_of(p)], False)

    def _keep(self, folder: Path, p: Path, files: str, f: Future, tests: str, stub: dict) -> dict:
        """Write one student's reports and return the record. A failure met with this student (their
        worker died, their files or their report made the grader fail) leaves them not graded, with
        the reason, and the run goes on; the run's own (the disk) is raised."""
        try:
            try:
                report = f.result()
            except BrokenExecutor as error:  # its worker died (the OOM killer?): the grader failed
                report = not_graded(p, self.stages, error)
            course = record(name_of(p), report, p, self.stages, files, tests, stub, self.seed)
            write_student(folder, name_of(p), report, course, self.lang, timed=self.seed is None)
        except Exception as error:  # noqa: BLE001 - see own_failure: the run's own failures are raised
            if not own_failure(error):
                raise
            report = not_graded(p, self.stages, error)
            course = record(name_of(p), report, p, self.stages, "", tests, stub, self.seed)
            write_student(folder, name_of(p), report, course, self.lang, timed=self.seed is None)
        return course

    def _write_csv(self, records: dict) -> None:
        write_whole(self.out, class_csv(list(records.values()), self.stages))

    def write_summary(self, records: list[dict]) -> str:
        text = class_summary(records, self.stages, self.lang)
        write_whole(summary_path(self.out), text)
        return text


def grade_class(class_dir: Path, grader_root: Path, out: Path, stages=STAGES, progress=None, **options):
    """Grade a class into ``out`` (CSV), its reports folder and summary; the records."""
    course = Course(Path(class_dir), Path(grader_root), Path(out), tuple(stages), **options)
    records = course.run(progress)
    course.write_summary(records)
    return records
