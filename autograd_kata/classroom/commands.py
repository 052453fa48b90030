"""Classroom commands: ``kata release`` (a student copy) and ``kata grade``
(scores instructors can trust; also a Gradescope autograder).

Each is a plain function of the parsed values (``autograd_kata.cli`` holds their
arguments and help ids) that returns an exit status or raises ``Refusal``.  Top-level
imports stay light: the work is in ``autograd_kata.classroom.release``,
``autograd_kata.classroom.grading.grade``, ``autograd_kata.classroom.course.run`` (``--class``) and
``autograd_kata.classroom.platforms.gradescope``,
imported by the handlers.  The GitHub Actions workflow of a student copy runs
``python -m autograd_kata.instructor grade --stage N`` (the kata command with the
instructors' commands, which a student copy's ``kata`` leaves out).
"""
from __future__ import annotations

from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t

# ``kata grade``'s exit status when the grader itself failed (report.NOT_GRADED): nothing graded,
# not "graded, not full marks" (1); the platforms' wrappers then report a failed autograder
NOT_GRADED = 3


def _root():
    from autograd_kata.core.manifest import find_root
    return find_root()


def release(folder: str, with_diff: bool = False) -> int:
    from pathlib import Path

    from autograd_kata.classroom.release import release as write_copy
    return write_copy(_root(), Path(folder), with_diff=with_diff)


def autograder(zip_path: str, classroom50: bool = False, prairielearn: bool = False) -> int:
    from pathlib import Path

    from autograd_kata.core.i18n import current_language
    if classroom50 and prairielearn:
        raise Refusal("--classroom50 and --prairielearn: one platform at a time", code=2, where="autograder")
    if prairielearn:
        from autograd_kata.classroom.platforms.prairielearn import build_prairielearn
        return build_prairielearn(_root(), Path(zip_path), lang=current_language())
    if classroom50:
        from autograd_kata.classroom.platforms.classroom50 import build_classroom50
        return build_classroom50(_root(), Path(zip_path), lang=current_language())
    from autograd_kata.classroom.platforms.gradescope import build_autograder
    return build_autograder(_root(), Path(zip_path), lang=current_language())


def grade(submission: str | None = None, fmt: str = "text", out: str | None = None, stages=None,
          stage_timeout: float = 30.0, jobs: int | None = None, class_dir: str | None = None,
          tests_from: str | None = None, autograder: str | None = None, seed: int | None = None,
          workers: int | None = None, force: bool = False, student: str | None = None,
          shard: str | None = None, merge: bool = False, shards=()) -> int:
    from pathlib import Path

    from autograd_kata.core.i18n import current_language

    lang = current_language()
    if autograder:
        from autograd_kata.classroom.platforms.gradescope import build_autograder
        return build_autograder(_root(), Path(autograder), lang=lang)
    if merge:
        return _merge(list(shards), out, lang, alone=not (submission or class_dir) and fmt == "text")
    if shards:
        raise Refusal(f"{shards[0]}: only --merge takes files (the shards' CSVs)", code=2, where="grade")
    import sys
    if sys.platform.startswith(("win", "cygwin")):  # no sessions, process groups or rlimits for the sandbox
        raise Refusal(t("grade.refused.windows"), code=2, where="grade")
    from autograd_kata.classroom.grading import grade as g
    from autograd_kata.core.manifest import STAGES, stage

    try:
        chosen = [stage(n) for n in stages] if stages else list(STAGES)
    except ValueError as error:
        raise Refusal(str(error), code=2, where="grade") from None
    chosen = sorted(set(chosen), key=lambda s: s.number)
    grader_root = Path(tests_from) if tests_from else _root()
    if class_dir:
        return _grade_class(Path(class_dir), grader_root, chosen, out, stage_timeout, jobs, lang=lang, seed=seed,
                            workers=workers, force=force, student=student, shard=shard,
                            alone=not submission and fmt == "text")
    if workers or force or student or shard:
        raise Refusal("--workers, --force, --student and --shard go with --class DIR", code=2, where="grade")
    graded = Path(submission) if submission else _root()
    if out and Path(out).is_file():
        Path(out).unlink()  # an old report must not pass for this grading's if this one dies
    report = g.grade(graded, grader_root, chosen, stage_timeout=stage_timeout, jobs=jobs, seed=seed)
    from autograd_kata.classroom.grading.formats import render, write
    timed = seed is None  # a reproduced grading is written without its timings: the same bytes every time
    try:
        write(report, fmt, out, lang=lang, timed=timed)
    except OSError as error:
        print(render(report, "text", lang, timed), end="")  # the scores are not lost, then the refusal says why
        raise Refusal(f"could not write {out}: {error}", code=2, where="grade") from None
    if not report.graded:
        return NOT_GRADED  # the grader failed: no grade at all, whatever the report's numbers
    return 0 if report.score == report.max_score else 1


def _grade_class(class_dir, grader_root, stages, out, stage_timeout, jobs, lang, seed, workers, force,
                 student, shard, alone: bool) -> int:
    import os
    import sys
    from pathlib import Path

    from autograd_kata.classroom.course import outputs as class_outputs
    from autograd_kata.classroom.course import roster
    from autograd_kata.classroom.course import run as course

    if not class_dir.is_dir():
        raise Refusal(f"{class_dir} is not a folder", code=2, where="grade --class")
    if not alone:
        raise Refusal("writes a CSV and a summary; --submission and --format do not apply",
                      code=2, where="grade --class")
    if workers is not None and workers < 1:
        raise Refusal("--workers must be at least 1", code=2, where="grade --class")
    where = roster.parse_shard(shard, os.environ)
    default = "class-grades.csv" if where is None else "class-grades.shard{k}of{n}.csv"
    out = Path((out or default).replace("{k}", str(where[0]) if where else "").replace(
        "{n}", str(where[1]) if where else ""))
    if student is not None and not out.is_file():
        raise Refusal(f"--student regrades one student into an existing CSV; {out} does not exist",
                      code=2, where="grade --student")

    def progress(name, record, kept):
        note = " " + t("grade.class.kept") if kept else ""
        if record.get("graded", True) is False:
            print(f"{name}: {t('grade.class.not_graded')}", flush=True)
        else:
            print(f"{name}: {record['score']}/{record['max_score']}{note}", flush=True)

    try:
        records = course.grade_class(class_dir, grader_root, out, stages, progress=progress,
                                     stage_timeout=stage_timeout, jobs=jobs, workers=workers, seed=seed,
                                     force=force, only=student, shard=where, lang=lang)
    except course.Interrupted as stop:
        print(t("grade.class.interrupted", out=str(out)), file=sys.stderr, flush=True)
        return 128 + stop.signum
    except BrokenPipeError:
        raise
    except OSError as error:
        raise Refusal(f"could not write next to {out}: {error}", code=2, where="grade --class") from None
    print(class_outputs.summary_path(out).read_text(encoding="utf-8"), end="")
    print(t("grade.class.wrote", out=str(out), summary=str(class_outputs.summary_path(out)),
            reports=str(class_outputs.reports_dir(out))))
    return _class_status(records, where is not None)


def _class_status(records: list[dict], shard: bool) -> int:
    """``--class``'s (and ``--merge``'s) exit status: NOT_GRADED when the grader failed on some
    student, 1 when there was no student at all (outside a shard: a wrong folder?), else 0,
    whatever the students scored (their scores are the CSV's)."""
    if any(r.get("graded", True) is False for r in records):
        return NOT_GRADED
    return 0 if records or shard else 1


def _merge(shards, out, lang, alone: bool) -> int:
    from pathlib import Path

    from autograd_kata.classroom.course import outputs as class_outputs

    if not alone:
        raise Refusal("--merge joins shards' CSVs; --submission, --class and --format do not apply",
                      code=2, where="grade --merge")
    if not out:
        raise Refusal("--merge needs --out FILE.csv", code=2, where="grade --merge")
    out = Path(out)
    try:
        records = class_outputs.merge([Path(p) for p in shards], out, lang)
    except OSError as error:
        raise Refusal(f"could not merge into {out}: {error}", code=2, where="grade --merge") from None
    print(class_outputs.summary_path(out).read_text(encoding="utf-8"), end="")
    print(t("grade.merge.wrote", shards=len(shards), n=len(records), out=str(out),
            summary=str(class_outputs.summary_path(out)), reports=str(class_outputs.reports_dir(out))))
    return _class_status(records, shard=True)  # every shard may be empty: an empty class, merged


def help_fields() -> dict[str, str]:
    """The computed part of ``kata grade --help`` (cli.COMMANDS): the points per stage."""
    import textwrap

    from autograd_kata.core.manifest import STAGES
    stages = t("help.grade.points_sep").join(t("help.grade.points_of", n=s.number, points=s.points) for s in STAGES)
    return {"points": textwrap.fill(t("help.grade.points", stages=stages, total=sum(s.points for s in STAGES)), 76)}
