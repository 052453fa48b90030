"""Run stage tests in a fresh pytest process and read back every test's outcome.

Results are read from pytest's JUnit XML and *fail closed*: a test counts as
passed only when the report says it passed.  One process can run many stages;
a stage module that does not import fails only its own tests (the ``engine``
fixture imports lazily), so the others' results stand.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from autograd_kata.core.manifest import STAGES, Stage, stage_of_module


@dataclass
class Outcome:
    name: str        # e.g. test_tanh_slope_comes_from_the_output[stage04_tanh]
    status: str      # passed, failed, error, skipped
    message: str = ""


class Tally:
    """Counts over ``self.tests`` (anything with a ``status``), failing closed."""

    tests: list

    @property
    def passed(self) -> int:
        return sum(t.status == "passed" for t in self.tests)

    @property
    def total(self) -> int:
        return len(self.tests)

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total


@dataclass
class StageResult(Tally):
    stage: Stage
    impl: str
    tests: list[Outcome] = field(default_factory=list)
    problem: str = ""  # why the stage could not be run at all, if so

    @property
    def ok(self) -> bool:
        return not self.problem and self.all_passed


def pytest_command(impl: str, stages, junit: Path, extra=()) -> list[str]:
    files = [s.test_file for s in stages]
    return [sys.executable, "-m", "pytest", *files, f"--impl={impl}", "-q", "--no-header",
            "-p", "no:cacheprovider", f"--junitxml={junit}", "-o", "junit_family=xunit2", *extra]


def case_status(case: ET.Element) -> tuple[str, str]:
    """(status, message) of one JUnit <testcase>: passed unless a child says otherwise."""
    for child in case:
        if child.tag in ("failure", "error", "skipped"):
            status = {"failure": "failed"}.get(child.tag, child.tag)
            return status, (child.get("message") or child.text or "").strip()
    return "passed", ""


def parse_junit(path: Path, impl: str, stages) -> dict[int, StageResult]:
    results = {s.number: StageResult(s, impl) for s in stages}
    for case in ET.parse(path).getroot().iter("testcase"):
        stage = stage_of_module(case.get("classname", "") or "")
        if stage is None or stage.number not in results:
            continue
        results[stage.number].tests.append(Outcome(case.get("name", "?"), *case_status(case)))
    for result in results.values():
        if not result.tests:
            result.problem = "no test of this stage was reported"
    return results


def run(impl: str = "exercises", stages=STAGES, root: Path | None = None,
        timeout: float = 300, extra=()) -> dict[int, StageResult]:
    """Run ``stages``' tests against ``impl`` in one pytest process under ``root``."""
    root = Path(root or Path.cwd())
    missing = {s.number: StageResult(s, impl, problem=f"{s.test_file} is missing")
               for s in stages if not (root / s.test_file).is_file()}
    stages = [s for s in stages if s.number not in missing]
    if not stages:
        return missing
    with tempfile.TemporaryDirectory(prefix="kata-") as tmp:
        junit = Path(tmp) / "junit.xml"
        env = {**os.environ, "KATA_IMPL": impl, "PYTHONDONTWRITEBYTECODE": "1"}
        try:
            proc = subprocess.run(pytest_command(impl, stages, junit, extra), cwd=root, env=env,
                                  capture_output=True, text=True, timeout=timeout)
            crash = f"pytest exited with code {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        except subprocess.TimeoutExpired:
            crash = f"the tests did not finish within {timeout:.0f} s"
        if junit.exists():
            try:
                return {**parse_junit(junit, impl, stages), **missing}
            except ET.ParseError as error:
                crash = f"unreadable test report: {error}"
    return {**{s.number: StageResult(s, impl, problem=crash) for s in stages}, **missing}
