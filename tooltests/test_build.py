"""The stub generator: markers, stubs, --check, and never losing a learner's file."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.core.build import MarkerError, build, regions, strip_markers, stub_source
from autograd_kata.core.manifest import STAGES, stage

ROOT = Path(__file__).resolve().parent.parent

SOURCE = '''class Value:
    def tanh(self):
        """doc"""
        # BEGIN SOLUTION
        t = 1
        return t
        # END SOLUTION

    def rule(self):
        self.grad += 1  # STUB: self.grad = 1
'''


def test_a_region_becomes_a_raise_naming_stage_and_method():
    out = stub_source(SOURCE, stage(4))
    assert 'raise NotImplementedError("stage 4: write Value.tanh (kata hint 4)")' in out
    assert "t = 1" not in out and "BEGIN SOLUTION" not in out
    assert '"""doc"""' in out


def test_a_stub_line_becomes_its_naive_code():
    out = stub_source(SOURCE, stage(6))
    assert "        self.grad = 1\n" in out
    assert "+=" not in out and "STUB" not in out


def test_strip_markers_leaves_clean_reference():
    out = strip_markers(SOURCE)
    assert "BEGIN" not in out and "STUB" not in out
    assert "        self.grad += 1\n" in out and "t = 1" in out


@pytest.mark.parametrize("bad, why", [
    ("# BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("x = 1\n# END SOLUTION\n", "without a"),
    ("# BEGIN SOLUTION\n# BEGIN SOLUTION\n# END SOLUTION\n", "inside the region"),
    ("x = 1\n", "nothing for the learner"),
])
def test_bad_markers_are_a_clear_error(bad, why):
    with pytest.raises(MarkerError, match=why):
        regions(bad, stage(1), "f.py")


def test_every_reference_module_has_regions_and_stubs_compile():
    for s in STAGES:
        src = (ROOT / s.source("solutions")).read_text()
        assert regions(src, s)
        compile(stub_source(src, s), s.module, "exec")
        compile(strip_markers(src), s.module, "exec")


@pytest.fixture
def copy(tmp_path):
    for name in ("solutions", "exercises"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    return tmp_path


def test_check_passes_on_the_committed_tree(copy):
    lines = []
    assert build(copy, check=True, out=lines.append) == 0


def test_check_names_a_stale_file_and_fails(copy):
    target = copy / "exercises" / "stage03_coercion.py"
    target.write_text(target.read_text() + "\n# edited\n")
    lines = []
    assert build(copy, check=True, out=lines.append) == 1
    assert any("exercises/stage03_coercion.py differs" in line for line in lines)


def test_build_backs_up_a_learners_file_before_replacing_it(copy):
    target = copy / "exercises" / "stage03_coercion.py"
    mine = target.read_text() + "\n# my work\n"
    target.write_text(mine)
    lines = []
    assert build(copy, out=lines.append) == 0
    backups = list((copy / ".kata" / "backups").glob("stage03_coercion.*.py"))
    assert len(backups) == 1 and backups[0].read_text() == mine
    assert any(str(backups[0].relative_to(copy)) in line for line in lines)
    assert build(copy, check=True, out=lines.append) == 0


def test_build_without_solutions_refuses(copy):
    shutil.rmtree(copy / "solutions")
    lines = []
    assert build(copy, out=lines.append) == 2
    assert "kata reset" in " ".join(lines)


def test_the_cli_reports_check_through_its_exit_code():
    proc = subprocess.run([sys.executable, "-m", "autograd_kata.cli", "build", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout
