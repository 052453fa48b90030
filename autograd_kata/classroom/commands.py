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

Each stage runs in its own pytest process, in a temporary folder holding the
grader's own tests/, conftest.py and pyproject.toml and, from the submission,
only exercises/stageNN_*.py of that stage. A test counts only if pytest's
JUnit report says it passed; a stage that hangs (--stage-timeout), crashes or
exits early scores 0 with a reason, and the other stages are still graded.
The report is always written. Exit code: 0 when every graded stage earned
its points, 1 otherwise, 2 when the grading could not be set up.
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
    submission = Path(args.submission) if args.submission else _root()
    report = g.grade(submission, grader_root, stages, stage_timeout=args.stage_timeout, jobs=args.jobs)
    try:
        g.write(report, args.format, args.out)
    except OSError as error:
        print(f"kata grade: could not write {args.out}: {error}", file=sys.stderr)
        print(g.as_text(report), end="")
        return 2
    return 0 if report.score == report.max_score else 1


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
    p.add_argument("--stage-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="wall-clock limit for one stage's tests (default: 60); each test also has "
                        "pytest-timeout's limit from pyproject.toml")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="stages graded at once (default: the number of CPUs, at most 8)")
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
