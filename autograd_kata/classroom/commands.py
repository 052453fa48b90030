"""Classroom commands: ``kata release`` (a student copy) and ``kata grade``
(scores instructors can trust; also a Gradescope autograder).

Top-level imports stay light (``kata --help`` must start fast): the work is
in ``autograd_kata.classroom.release``, ``autograd_kata.classroom.grade`` and ``autograd_kata.classroom.gradescope``, imported by the
handlers.  ``python -m autograd_kata grade ...`` runs the grader without the
rest of the CLI (the Gradescope autograder and the GitHub Classroom workflow
use it).
"""
from __future__ import annotations

import argparse
import sys

FORMATS = ("text", "json", "gradescope", "junit")

GRADE_HELP = """\
Grade a submission stage by stage.

Scoring: all or nothing per stage. A stage earns its points only when every
one of its tests passes, else 0. Every format (text, json, gradescope, junit)
and the GitHub Classroom workflow of `kata release` use this same rule.
{points}

Each stage is judged by a pytest process running the grader's own tests/,
conftest.py and pyproject.toml; the submitted exercises/stageNN_*.py of that
stage runs only in a separate sandbox process that answers the judge's
questions with data. Run as root, the sandbox runs as the user kata-sandbox in
a jail that shows it only its own file and the Python standard library;
otherwise the report's first line says uid isolation was not available.
Grading adds hidden checks drawn from a fresh secret seed. A stage that hangs
(--stage-timeout), crashes or exits early scores 0 with a reason, and the other
stages are still graded. The report is always written, by the grader, after
every sandbox process is gone. Exit code: 0 when every graded stage earned its
points, 1 otherwise, 2 when the grading could not be set up.

With --class DIR (one folder per student), every folder is graded and --out
(default: class-grades.csv) gets one CSV row per student (per-stage points,
total); a class summary (pass rate per stage, the classic mistakes most often
named in the failures) is printed and written next to it (.summary.txt).
"""


def _root():
    from autograd_kata.core.manifest import find_root
    return find_root()


def _release(args) -> int:
    from autograd_kata.classroom.release import release
    return release(_root(), args.dir, with_diff=args.with_diff)


def _autograder(args) -> int:
    from autograd_kata.classroom.gradescope import build_autograder
    return build_autograder(_root(), args.zip)


def _grade(args) -> int:
    from pathlib import Path

    if getattr(args, "autograder", None):
        from autograd_kata.classroom.gradescope import build_autograder
        return build_autograder(_root(), args.autograder)
    from . import grade as g
    from autograd_kata.core.manifest import STAGES, stage

    try:
        stages = [stage(n) for n in args.stage] if args.stage else list(STAGES)
    except ValueError as error:
        print(f"kata grade: {error}", file=sys.stderr)
        return 2
    stages = sorted(set(stages), key=lambda s: s.number)
    grader_root = Path(args.tests_from) if args.tests_from else _root()
    if args.class_dir:
        return _grade_class(g, Path(args.class_dir), grader_root, stages, args)
    submission = Path(args.submission) if args.submission else _root()
    if args.out and Path(args.out).is_file():
        Path(args.out).unlink()  # an old report must not pass for this grading's if this one dies
    report = g.grade(submission, grader_root, stages, stage_timeout=args.stage_timeout, jobs=args.jobs)
    try:
        g.write(report, args.format, args.out)
    except OSError as error:
        print(f"kata grade: could not write {args.out}: {error}", file=sys.stderr)
        print(g.as_text(report), end="")
        return 2
    return 0 if report.score == report.max_score else 1


def _grade_class(g, class_dir, grader_root, stages, args) -> int:
    from pathlib import Path

    if not class_dir.is_dir():
        print(f"kata grade --class: {class_dir} is not a folder", file=sys.stderr)
        return 2
    if args.submission or args.format != "text":
        print("kata grade --class: writes a CSV and a summary; --submission and --format do not apply",
              file=sys.stderr)
        return 2
    out = Path(args.out or "class-grades.csv")
    summary_path = out.with_name(out.stem + ".summary.txt")

    def progress(name, report):
        print(f"{name}: {report.score}/{report.max_score}", flush=True)

    graded = g.grade_class(class_dir, grader_root, stages, stage_timeout=args.stage_timeout, jobs=args.jobs,
                           progress=progress)
    summary = g.class_summary(graded, stages)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(g.class_csv(graded, stages), encoding="utf-8")
        summary_path.write_text(summary, encoding="utf-8")
    except OSError as error:
        print(f"kata grade --class: could not write {out}: {error}", file=sys.stderr)
        return 2
    print(summary, end="")
    print(f"wrote {out} and {summary_path}")
    return 0 if graded else 1


def add_grade_parser(sub) -> argparse.ArgumentParser:
    import textwrap

    from autograd_kata.core.manifest import STAGES
    points = textwrap.fill("Points (from the stage manifest): " + ", ".join(
        f"stage {s.number}: {s.points}" for s in STAGES) + f"; {sum(s.points for s in STAGES)} in all.", 76)
    description = GRADE_HELP.format(points=points)
    p = sub.add_parser("grade", help="score a submission per stage (text, json, gradescope, junit)",
                       description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--submission", metavar="DIR",
                   help="the submission: a folder with exercises/stageNN_*.py (or those files at its top); "
                        "default: this kata")
    p.add_argument("--format", choices=FORMATS, default="text", help="report format (default: text)")
    p.add_argument("--out", metavar="PATH", help="write the report here (default: standard output)")
    p.add_argument("--stage", action="append", metavar="N",
                   help="grade only stage N (repeatable; default: every stage)")
    p.add_argument("--stage-timeout", type=float, default=30.0, metavar="SECONDS",
                   help="wall-clock limit for one stage's judge (default: 30); each request to the sandbox "
                        "also has its own limit, and the first hang ends the stage")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="stages graded at once (default: the CPUs this process may use, os.sched_getaffinity)")
    p.add_argument("--class", dest="class_dir", metavar="DIR",
                   help="grade every student folder in DIR; write a CSV (--out) and a class summary")
    p.add_argument("--tests-from", metavar="DIR",
                   help="the kata whose tests/ and conftest.py grade (default: this kata)")
    p.add_argument("--autograder", metavar="ZIP",
                   help="instead of grading, write a Gradescope autograder zip to ZIP")
    p.set_defaults(func=_grade)
    return p


def register(sub) -> None:
    p = sub.add_parser("release", help="write a student copy (no reference code) to an empty folder",
                       description="Write a student copy of the kata to DIR: exercises, tests, hints, README, "
                                   "the kata tool, pristine stubs for `kata reset`, and a GitHub Classroom "
                                   "workflow (.github/workflows/classroom.yml, one graded step per stage). "
                                   "No solutions/ and no solution code: the copy is scanned, and a leak "
                                   "aborts the release (exit 1, nothing written). DIR must not exist or be empty.")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--with-diff", action="store_true",
                   help="keep the README's steps that compare with the reference (kata diff N), "
                        "for a class that gets the reference later")
    p.set_defaults(func=_release)
    add_grade_parser(sub)
    p = sub.add_parser("autograder", help="write a Gradescope autograder zip (same as grade --autograder)",
                       description="Write a Gradescope autograder zip (setup.sh, run_autograder, the tests and "
                                   "the kata tool; no reference code) to ZIP.")
    p.add_argument("zip", metavar="ZIP")
    p.set_defaults(func=_autograder)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograd_kata.classroom.commands")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    register(sub)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
