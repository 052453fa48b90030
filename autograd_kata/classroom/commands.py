"""Classroom commands: ``kata release`` (a student copy) and ``kata grade``
(scores instructors can trust; also a Gradescope autograder).

Each is a plain function of the parsed values (``autograd_kata.cli`` holds their
arguments and help ids) that returns an exit status or raises ``Refusal``.  Top-level
imports stay light: the work is in ``autograd_kata.classroom.release``,
``autograd_kata.classroom.grade`` and ``autograd_kata.classroom.gradescope``,
imported by the handlers.  The GitHub Classroom workflow of a student copy runs
``python -m autograd_kata.instructor grade --stage N`` (the kata command with the
instructors' commands, which a student copy's ``kata`` leaves out).
"""
from __future__ import annotations

from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t


def _root():
    from autograd_kata.core.manifest import find_root
    return find_root()


def release(folder: str, with_diff: bool = False) -> int:
    from pathlib import Path

    from autograd_kata.classroom.release import release as write_copy
    return write_copy(_root(), Path(folder), with_diff=with_diff)


def autograder(zip_path: str) -> int:
    from pathlib import Path

    from autograd_kata.classroom.gradescope import build_autograder
    return build_autograder(_root(), Path(zip_path))


def grade(submission: str | None = None, fmt: str = "text", out: str | None = None, stages=None,
          stage_timeout: float = 30.0, jobs: int | None = None, class_dir: str | None = None,
          tests_from: str | None = None, autograder: str | None = None) -> int:
    from pathlib import Path

    if autograder:
        from autograd_kata.classroom.gradescope import build_autograder
        return build_autograder(_root(), Path(autograder))
    from autograd_kata.core.manifest import STAGES, stage

    from . import grade as g

    try:
        chosen = [stage(n) for n in stages] if stages else list(STAGES)
    except ValueError as error:
        raise Refusal(str(error), code=2, where="grade") from None
    chosen = sorted(set(chosen), key=lambda s: s.number)
    grader_root = Path(tests_from) if tests_from else _root()
    if class_dir:
        return _grade_class(g, Path(class_dir), grader_root, chosen, out, stage_timeout, jobs,
                            alone=not submission and fmt == "text")
    graded = Path(submission) if submission else _root()
    if out and Path(out).is_file():
        Path(out).unlink()  # an old report must not pass for this grading's if this one dies
    report = g.grade(graded, grader_root, chosen, stage_timeout=stage_timeout, jobs=jobs)
    from autograd_kata.classroom.formats import as_text, write
    try:
        write(report, fmt, out)
    except OSError as error:
        print(as_text(report), end="")  # the scores are not lost, then the refusal says why
        raise Refusal(f"could not write {out}: {error}", code=2, where="grade") from None
    return 0 if report.score == report.max_score else 1


def _grade_class(g, class_dir, grader_root, stages, out, stage_timeout, jobs, alone: bool) -> int:
    from pathlib import Path

    if not class_dir.is_dir():
        raise Refusal(f"{class_dir} is not a folder", code=2, where="grade --class")
    if not alone:
        raise Refusal("writes a CSV and a summary; --submission and --format do not apply",
                      code=2, where="grade --class")
    out = Path(out or "class-grades.csv")
    summary_path = out.with_name(out.stem + ".summary.txt")

    def progress(name, report):
        print(f"{name}: {report.score}/{report.max_score}", flush=True)

    graded = g.grade_class(class_dir, grader_root, stages, stage_timeout=stage_timeout, jobs=jobs,
                           progress=progress)
    summary = g.class_summary(graded, stages)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(g.class_csv(graded, stages), encoding="utf-8")
        summary_path.write_text(summary, encoding="utf-8")
    except OSError as error:
        raise Refusal(f"could not write {out}: {error}", code=2, where="grade --class") from None
    print(summary, end="")
    print(f"wrote {out} and {summary_path}")
    return 0 if graded else 1


def help_fields() -> dict[str, str]:
    """The computed part of ``kata grade --help`` (cli.COMMANDS): the points per stage."""
    import textwrap

    from autograd_kata.core.manifest import STAGES
    stages = t("help.grade.points_sep").join(t("help.grade.points_of", n=s.number, points=s.points) for s in STAGES)
    return {"points": textwrap.fill(t("help.grade.points", stages=stages, total=sum(s.points for s in STAGES)), 76)}
