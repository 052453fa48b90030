"""How the stage tests run: --impl, markers, one-line stub failures, isolation, time limits."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograd_kata.core.build import strip_markers
from autograd_kata.core.manifest import STAGES, stage
from kit import stage_test_count

ROOT = Path(__file__).resolve().parent.parent

# Each test starts pytest in a child process (a second or two each, more on a busy machine).
pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def repo(tmp_path):
    """A throwaway copy of the kata, so its exercises/ can be broken freely."""
    for name in ("exercises", "solutions", "tests"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def pytest_in(root, *args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=root,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "KATA_IMPL": "", **(env or {})})


def solve(root, n):
    s = stage(n)
    (root / s.source("exercises")).write_text(strip_markers((root / s.source("solutions")).read_text()))


def test_an_untouched_stub_fails_with_one_readable_line(repo):
    proc = pytest_in(repo, STAGES[0].test_file)
    assert proc.returncode == 1
    assert "not written yet: stage 1: write Value.__init__ (kata hint 1)" in proc.stdout
    assert "Traceback" not in proc.stdout and "raise NotImplementedError" not in proc.stdout


def test_impl_option_and_env_select_the_reference(repo):
    by_option = pytest_in(repo, STAGES[0].test_file, "--impl", "solutions", "-q")
    by_env = pytest_in(repo, STAGES[0].test_file, "-q", env={"KATA_IMPL": "solutions"})
    assert by_option.returncode == 0 and by_env.returncode == 0, by_option.stdout + by_env.stdout
    assert "testing the reference in solutions/" in pytest_in(repo, STAGES[0].test_file, "--impl",
                                                            "solutions").stdout


def test_impl_is_known_wherever_pytest_starts(repo, tmp_path_factory):
    """The root conftest.py is read before pytest parses its command line, from the kata's
    folder, from tests/, and from elsewhere with the test file as a path: --impl is known in
    all three, with no pytest11 plugin loading into every other pytest run of the venv."""
    name = Path(STAGES[0].test_file).name
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    for where, target in ((repo, STAGES[0].test_file), (repo / "tests", name),
                          (elsewhere, str(repo / STAGES[0].test_file))):
        proc = pytest_in(where, target, "--impl", "solutions", "-q")
        assert proc.returncode == 0 and " passed" in proc.stdout, f"from {where}:\n{proc.stdout}{proc.stderr}"


def test_a_bad_kata_impl_is_a_usage_error(repo):
    proc = pytest_in(repo, STAGES[0].test_file, env={"KATA_IMPL": "answers"})
    assert proc.returncode == 4 and "KATA_IMPL='answers'" in proc.stderr


def test_reference_tests_run_on_every_later_module(repo):
    proc = pytest_in(repo, STAGES[0].test_file, "--impl", "solutions", "--collect-only", "-q")
    for s in STAGES:
        assert f"[{s.module}" in proc.stdout, s.module


def test_stage_marker_selects_one_stage(repo):
    proc = pytest_in(repo, "-m", "stage2", "--impl", "solutions", "--collect-only", "-q")
    names = [line for line in proc.stdout.splitlines() if "::" in line]
    assert names and all("test_stage02_add_mul.py" in line for line in names)


def test_a_syntax_error_in_one_stage_leaves_the_others_alone(repo):
    solve(repo, 1)
    solve(repo, 2)
    before = pytest_in(repo, STAGES[1].test_file, "-q")
    assert before.returncode == 0, before.stdout
    (repo / STAGES[0].source()).write_text("class Value(:\n")
    proc = pytest_in(repo, STAGES[0].test_file, STAGES[1].test_file, "-q")
    assert "exercises/stage01_value.py does not import (line 1): SyntaxError" in proc.stdout
    tail = proc.stdout.strip().splitlines()[-1]
    passed_stage2 = before.stdout.strip().splitlines()[-1].split()[0]
    assert f"{passed_stage2} passed" in tail, tail


def test_an_infinite_loop_fails_within_the_time_limit_and_stops_its_stage(repo):
    solve(repo, 1)
    path = repo / STAGES[0].source()
    path.write_text(path.read_text().replace("self.data = float(data)", "while True:\n            pass"))
    start = time.monotonic()
    proc = pytest_in(repo, STAGES[0].test_file, "-q", timeout=60)
    assert proc.returncode == 1
    loop = next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.strip() == "while True:")
    assert "hung: the test ran past its 2 s time limit; your code was at exercises/stage01_value.py:" in proc.stdout
    assert any(f"exercises/stage01_value.py:{n}, in __init__" in proc.stdout for n in (loop, loop + 1)), proc.stdout
    assert "An infinite loop?" in proc.stdout
    tail = proc.stdout.strip().splitlines()[-1]
    assert "1 failed" in tail and f"{stage_test_count(1) - 1} skipped" in tail, tail  # the first hang stopped the stage
    assert time.monotonic() - start < 20


def test_a_heavy_test_gets_the_larger_time_limit(repo):
    proc = pytest_in(repo, STAGES[4].test_file, "--impl", "solutions", "-q", "--collect-only")
    assert proc.returncode == 0
    code = ("import conftest, sys; print(conftest.STAGE_TIMEOUT, conftest.HEAVY_TIMEOUT)")
    limits = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": f"{repo}{os.pathsep}{repo / 'tests'}"})
    stage_limit, heavy_limit = map(float, limits.stdout.split())
    assert stage_limit <= 2 < heavy_limit
    # the 100,000-op chain is marked own_stage_only, so it gets the heavy limit: it passes under load
    proc = pytest_in(repo, STAGES[4].test_file, "--impl", "solutions", "-q", "-k", "100000")
    assert proc.returncode == 0, proc.stdout


def test_a_bare_pytest_over_several_stages_ends_pointing_at_the_first(repo):
    proc = pytest_in(repo, STAGES[0].test_file, STAGES[1].test_file, "-q")
    assert proc.returncode == 1
    assert proc.stdout.rstrip().splitlines()[-1] == ("2 stages have failing tests; work on one at a time, "
                                                     "the first: kata check 1  (or: pytest -m stage1 -x)")
