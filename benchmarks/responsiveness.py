"""How quickly the learner's commands answer: the figures the tool tests used to assert.

    python benchmarks/responsiveness.py [--rounds 5]

A time limit inside a test fails on a busy machine while the behaviour is right (issue 27:
"help under 0.3 s" and "a hang found within 5 s" both failed with seven test runs on two
cores, and passed alone), so the tests check the effects (help imports nothing heavy, a
hang is reported with its line, a cached status runs no stage) and this script measures:

- ``help``: importing the CLI and building its parser, in a fresh interpreter (goal 0.3 s);
- ``status (cached)``: ``kata status`` once every stage's result is cached (goal 0.5 s);
- ``check, endless loop``: ``kata check 5`` on a topological order that never pops its
  stack, until it reports the hang with its line (goal 5 s).

Each figure is the median of ``--rounds`` runs.  Exit status 1 if a median misses its goal.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograd_kata.core.build import strip_markers  # noqa: E402
from autograd_kata.core.manifest import stage  # noqa: E402
from autograd_kata.core.student_copy import source_files  # noqa: E402

GOALS = {"help": 0.3, "status (cached)": 0.5, "check, endless loop": 5.0}
HELP = "import time; t = time.perf_counter(); import autograd_kata.cli as c; c.parser(); print(time.perf_counter() - t)"


def kata_copy(dest: Path) -> Path:
    """A learner's copy of the kata (the student files, the stubs) to run commands in."""
    for name in source_files(ROOT):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def kata(root: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KATA_")}
    return subprocess.run([sys.executable, "-m", "autograd_kata.cli", *argv], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def endless_stage_5(root: Path) -> None:
    s = stage(5)
    text = strip_markers((ROOT / s.source("solutions")).read_text(encoding="utf-8"))
    text = text.replace("node, inputs_done = stack.pop()", "node, inputs_done = stack[-1]  # forgot to pop")
    (root / s.source("exercises")).write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--rounds", type=int, default=5)
    rounds = options.parse_args(argv).rounds
    figures: dict[str, list[float]] = {name: [] for name in GOALS}
    with tempfile.TemporaryDirectory(prefix="kata-bench-") as tmp:
        root = kata_copy(Path(tmp) / "kata")
        endless_stage_5(root)
        kata(root, "status")  # fills the cache
        for _ in range(rounds):
            done = subprocess.run([sys.executable, "-c", HELP], capture_output=True, text=True, check=True)
            figures["help"].append(float(done.stdout.split()[0]))
            figures["status (cached)"].append(timed(lambda: kata(root, "status")))
            figures["check, endless loop"].append(timed(lambda: kata(root, "check", "5")))
    missed = 0
    for name, times in figures.items():
        median = statistics.median(times)
        verdict = "ok" if median <= GOALS[name] else "MISSED"
        missed += verdict != "ok"
        print(f"{name:<22} median {median:6.2f} s  (min {min(times):.2f}, max {max(times):.2f}; "
              f"goal {GOALS[name]} s) {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
