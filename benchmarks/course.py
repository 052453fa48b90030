"""The instructor's trial of issue 18: a class of 40 made from the reference, the
stubs and the classic-mistake catalogue, graded with ``kata grade --class``.

    python benchmarks/course.py [--out DIR] [--workers N] [--size 40] [--compare]

The class (``size`` 40; other sizes keep the proportions): 8 complete, 8 untouched
stubs, 12 partial (stages 1..k done, k = 1..7, the rest stubs), 8 with one classic
mistake (the catalogue's, in turn) in an otherwise complete submission, 2 whose
stage 3 hangs, 2 whose stage 2 does not parse.  It prints the truth table's total
per student next to the grade, the summary, and the wall and CPU seconds per
submission (this process and every child).  Exit status 1 if a score is not the
truth table's.

``--compare`` then runs the same tests on every submission the plain way, for
the yardstick of issue 18: one in-process ``pytest`` per submission (the
student's files as ``exercises/`` of a copy of the kata, the hidden checks on
with the same kind of seed), no judge, no sandbox; and prints the CPU seconds
per submission of both and their ratio (the goal: at most 1.5).
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograd_kata.classroom.course import outputs as class_outputs  # noqa: E402
from autograd_kata.classroom.course import run as course  # noqa: E402
from autograd_kata.core.build import strip_markers, stub_source  # noqa: E402
from autograd_kata.core.manifest import STAGES  # noqa: E402
from autograd_kata.core.runner import plugin_args  # noqa: E402
from autograd_kata.maintainer.mistakes import MISTAKES  # noqa: E402


def reference(s):
    return strip_markers((ROOT / s.source("solutions")).read_text(encoding="utf-8"))


def stub(s):
    return stub_source((ROOT / s.source("solutions")).read_text(encoding="utf-8"), s)


def mistaken(m):
    s = next(s for s in STAGES if s.number == m.stage)
    return strip_markers((ROOT / s.source("solutions")).read_text(encoding="utf-8").replace(m.old, m.new))


# mistakes that only advisory tests catch: reported under grading, worth no points (docs/instructors.md)
ADVISORY_ONLY = {"recursion-limit-raised", "seed-reseeds-the-global-random"}


def build(klass: Path, size: int) -> dict[str, int]:
    """Write the class; return each student's true total."""
    share = lambda n: max(1, round(n * size / 40))  # noqa: E731
    truth, students = {}, []
    points = {s.number: s.points for s in STAGES}
    for i in range(share(8)):
        students.append((f"complete{i:02d}", {s.number: reference(s) for s in STAGES}, sum(points.values())))
    for i in range(share(8)):
        students.append((f"stub{i:02d}", {s.number: stub(s) for s in STAGES}, 0))
    for i in range(share(12)):
        k = i % 7 + 1
        students.append((f"partial{i:02d}", {s.number: reference(s) if s.number <= k else stub(s) for s in STAGES},
                         sum(points[n] for n in range(1, k + 1))))
    for i in range(share(8)):
        m = MISTAKES[(i * 7) % len(MISTAKES)]
        files = {s.number: reference(s) for s in STAGES}
        files[m.stage] = mistaken(m)
        lost = 0 if m.id in ADVISORY_ONLY else points[m.stage]
        students.append((f"mistake{i:02d}-{m.id}", files, sum(points.values()) - lost))
    hang = reference(STAGES[2]) + "\nwhile True:\n    pass\n"
    for i in range(share(2)):
        files = {s.number: reference(s) for s in STAGES}
        files[3] = hang
        students.append((f"hang{i:02d}", files, sum(points.values()) - points[3]))
    for i in range(share(2)):
        files = {s.number: reference(s) for s in STAGES}
        files[2] = "class Value(:\n"
        students.append((f"syntax{i:02d}", files, sum(points.values()) - points[2]))
    for name, files, total in students:
        for n, text in files.items():
            path = klass / name / next(s for s in STAGES if s.number == n).source("exercises")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        truth[name] = total
    return truth


def cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def plain_runs(klass: Path) -> float:
    """CPU seconds per submission of one plain pytest process each (the tests in-process)."""
    import shutil
    import subprocess
    folders = sorted(p for p in klass.iterdir() if p.is_dir())
    with tempfile.TemporaryDirectory(prefix="kata-plain-") as tmp:
        kata = Path(tmp) / "kata"
        kata.mkdir()
        shutil.copytree(ROOT / "tests", kata / "tests")
        for name in ("conftest.py", "pyproject.toml"):
            shutil.copy2(ROOT / name, kata / name)
        before = cpu()
        for i, folder in enumerate(folders):
            shutil.rmtree(kata / "exercises", ignore_errors=True)
            shutil.copytree(folder / "exercises", kata / "exercises")
            (kata / "exercises" / "__init__.py").touch()
            env = {**os.environ, "KATA_HIDDEN_SEED": str(1000 + i), "PYTHONDONTWRITEBYTECODE": "1",
                   "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
            subprocess.run([sys.executable, "-m", "pytest", "-q", *plugin_args(), "--impl=exercises"], cwd=kata,
                           env=env, capture_output=True, check=False)  # the plugins every run of ours loads
        return (cpu() - before) / len(folders)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=None, help="where the class and its grades go (default: a temp dir)")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--size", type=int, default=40)
    p.add_argument("--compare", action="store_true", help="then run the same tests the plain way, and compare")
    args = p.parse_args(argv)
    where = args.out or Path(tempfile.mkdtemp(prefix="kata-course-"))
    truth = build(where / "class", args.size)
    start, cpu0 = time.monotonic(), cpu()
    records = course.grade_class(where / "class", ROOT, where / "grades.csv", STAGES, workers=args.workers,
                                 force=True, progress=lambda name, r, kept: print(f"{name}: {r['score']}", flush=True))
    wall, used = time.monotonic() - start, cpu() - cpu0
    wrong = [(r["student"], r["score"], truth[r["student"]]) for r in records if r["score"] != truth[r["student"]]]
    print(class_outputs.summary_path(where / "grades.csv").read_text(encoding="utf-8"))
    n = len(records)
    print(f"{n} submissions in {wall:.0f} s wall ({wall / n:.1f} s each), {used / n:.1f} CPU s per submission; "
          f"{os.cpu_count()} CPUs; grades in {where}")
    for name, got, want in wrong:
        print(f"WRONG: {name} scored {got}, the truth table says {want}")
    if args.compare:
        plain = plain_runs(where / "class")
        print(f"the same tests, one plain pytest per submission: {plain:.2f} CPU s per submission; "
              f"grading costs {used / n / plain:.2f}x that (goal: at most 1.5x)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
