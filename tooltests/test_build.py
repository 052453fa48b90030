"""The generator: one engine source cut into solutions/ and exercises/; markers,
stubs, banners, --check over both trees, and never losing a learner's file."""
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.core.build import (
    ENGINE,
    MarkerError,
    banner,
    build,
    cut,
    expected_files,
    previous_diff,
    regions,
    strip_markers,
    stub_source,
)
from autograd_kata.core.errors import Refusal
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.operations import rule_lines

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
    for name in ("solutions", "exercises", "reference"):
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


def test_check_names_a_stale_reference_module_too(copy):
    target = copy / "solutions" / "stage05_backward.py"
    target.write_text(target.read_text().replace("order.append(node)", "order.insert(0, node)"))
    lines = []
    assert build(copy, check=True, out=lines.append) == 1
    assert any("solutions/stage05_backward.py differs" in line for line in lines), lines
    assert build(copy, out=lines.append) == 0 and build(copy, check=True, out=lines.append) == 0
    assert list((copy / ".kata" / "backups").glob("stage05_backward.*.py"))  # the edit is kept


def test_build_without_the_engine_source_refuses(copy):
    shutil.rmtree(copy / "reference")
    with pytest.raises(Refusal) as refused:
        build(copy)
    assert refused.value.code == 2 and "kata reset" in refused.value.line() and ENGINE in refused.value.line()


# --- cutting the one engine source --------------------------------------------------

ENGINE_SOURCE = '''## a maintainer's note, in no module
# >> stage 1 only
"""Stage 1."""
# <<
# >> stage 2 only
"""Stage 2."""
# <<
# >> stage 3 only
"""Stage 3."""
# <<


class Value:
    def rule(self):
        # BEGIN SOLUTION
        self.grad += 1  # one  # before 3: self.grad = 1
        # END SOLUTION
    # >> stage 2

    def add(self):
        # BEGIN SOLUTION
        return 2
        # END SOLUTION
    # <<
    # >> stages 1-2

    def walk(self):
        # BEGIN SOLUTION
        return "old"
        # END SOLUTION
    # <<
    # >> stage 3

    def walk(self):
        # BEGIN SOLUTION
        first = 1
        # END SOLUTION
        return first
    # <<
'''


def test_a_range_says_where_code_appears_and_where_a_later_stage_replaces_it():
    one, two, three = (cut(ENGINE_SOURCE, stage(n)) for n in (1, 2, 3))
    assert one.startswith('"""Stage 1."""\n') and two.startswith('"""Stage 2."""\n')
    assert "maintainer" not in one + two + three and "# >>" not in one + two + three
    assert 'return "old"' in one and 'return "old"' in two and 'return "old"' not in three
    assert "first = 1" in three and "first = 1" not in two


def test_before_n_gives_the_old_line_until_stage_n_which_ships_it_as_its_stub():
    one, three = cut(ENGINE_SOURCE, stage(1)), cut(ENGINE_SOURCE, stage(3))
    assert "        self.grad = 1  # one\n" in one and "+=" not in one
    assert "        self.grad += 1  # one  # STUB: self.grad = 1  # one\n" in three
    assert "        self.grad = 1  # one\n" in stub_source(three, stage(3))


def test_solution_markers_stay_only_in_the_stage_that_introduces_them():
    one, two = cut(ENGINE_SOURCE, stage(1)), cut(ENGINE_SOURCE, stage(2))
    assert one.count("# BEGIN SOLUTION") == 2 and two.count("# BEGIN SOLUTION") == 1  # add's only
    assert "def add" not in one
    three = cut(ENGINE_SOURCE, stage(3))
    assert three.count("# BEGIN SOLUTION") == 1  # walk's new region; rule's is stage 1's


def test_each_module_has_one_banner_at_its_stages_first_new_line():
    three = cut(ENGINE_SOURCE, stage(3)).splitlines()
    at = three.index(banner(stage(3), "        ").rstrip("\n"))
    assert three[at + 1] == "        self.grad += 1  # one  # STUB: self.grad = 1  # one"
    for s in STAGES:
        text = (ROOT / s.source("solutions")).read_text()
        assert text.count(banner(s).strip()) == 1, s.module
        assert (ROOT / s.source("exercises")).read_text().count(banner(s).strip()) == 1, s.module
        assert ast.get_docstring(ast.parse(text)).startswith(f"Stage {s.number} ")  # the docstring stays first


@pytest.mark.parametrize("bad, why", [
    ("# >> stage 2\nx = 1\n", "never closed"),
    ("x = 1\n# <<\n", "closes no range"),
    ("# >> stages 4-2\nx = 1\n# <<\n", "empty range"),
    ('"""doc"""\n# >> stage 2\nx = (\n# <<\n', "does not parse"),
])
def test_bad_ranges_are_a_clear_error(bad, why):
    with pytest.raises(MarkerError, match=why):
        cut(bad, stage(2), "engine.py")


def test_the_committed_trees_are_the_engine_sources_cut():
    for path, text in expected_files(ROOT).items():
        assert path.read_text(encoding="utf-8") == text, f"{path.relative_to(ROOT)}: run kata build"


def test_stages_2_to_5_assign_and_stage_6_on_accumulate():
    assign, accumulate = re.compile(r"^\s+(self|other)\.grad = .*out\.grad", re.M), \
        re.compile(r"^\s+(self|other)\.grad \+= .*out\.grad", re.M)
    for s in STAGES[1:]:
        reference = strip_markers((ROOT / s.source("solutions")).read_text())
        learner = (ROOT / s.source("exercises")).read_text()
        if s.number < 6:
            assert accumulate.search(reference) is None and accumulate.search(learner) is None, s.module
        else:
            assert assign.search(reference) is None, s.module
            found = len(accumulate.findall(reference))
            assert found == rule_lines(s.number), (
                f"{s.module}: {found} lines add a share into a parent (self.grad += ... out.grad), "
                f"the operations table's rules want {rule_lines(s.number)} (one per Value operand of each "
                f"op with rule=True in autograd_kata/core/operations.py): a rule the table does not "
                f"list, or one the engine lacks")
    naive = (ROOT / stage(6).source("exercises")).read_text()
    found = len(assign.findall(naive))
    assert found == rule_lines(6), (
        f"stage 6's stub: {found} rules assign (=), the operations table's rules want {rule_lines(6)}: "
        f"every rule must arrive naive (# before 6: ... in reference/engine.py)")
    assert accumulate.search(naive) is None, "stage 6's stub already adds (+=) in a rule: it must arrive naive"


def test_a_stub_never_raises_twice_in_one_function():
    for s in STAGES:
        tree = ast.parse((ROOT / s.source("exercises")).read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            raises = [n for n in ast.walk(fn) if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call)
                      and getattr(n.exc.func, "id", "") == "NotImplementedError"]
            assert len(raises) <= 1, f"{s.module}: {fn.name} raises NotImplementedError {len(raises)} times"
    stage7 = (ROOT / stage(7).source("exercises")).read_text()
    assert "pass  # stage 7: part 2 of Value.backward goes here (kata hint 7)" in stage7


def test_previous_shows_what_a_stage_adds_without_its_answer():
    lines = previous_diff(ROOT, stage(4))
    added = "\n".join(line for line in lines if line.startswith("+"))
    assert '+        raise NotImplementedError("stage 4: write Value.tanh (kata hint 4)")' in lines
    assert "math.tanh(self.data)" not in added and banner(stage(4)).strip() not in added
    revealed = "\n".join(previous_diff(ROOT, stage(4), reveal=True))
    assert "+        t = math.tanh(self.data)" in revealed and "# BEGIN SOLUTION" not in revealed
    assert previous_diff(ROOT, stage(1))[0].startswith("--- (nothing")


def test_the_engine_is_written_once_outside_the_generated_trees():
    """The duplicates tool finds no copy of engine code outside solutions/ and exercises/."""
    if shutil.which("duplicates") is None:
        pytest.skip("the duplicates tool is not installed here")
    proc = subprocess.run(["duplicates", "--most", "200", "--seconds", "120"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    rows = [line for line in proc.stdout.splitlines() if re.match(r"D\d+ ", line)]
    assert rows or "no duplicates" in proc.stdout, proc.stdout + proc.stderr
    generated = re.compile(r" (solutions|exercises)/")
    # tests/ may spell out a computation to check it (a training loop): not a copy of the engine
    copies = [row for row in rows if "reference/engine.py" in row and not generated.search(row)
              and " tests/" not in row]
    assert not copies, "engine code written twice:\n" + "\n".join(copies)


def test_the_cli_reports_check_through_its_exit_code():
    proc = subprocess.run([sys.executable, "-m", "autograd_kata.cli", "build", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "up to date" in proc.stdout


def test_the_generated_folders_say_they_are_generated():
    """A maintainer opening solutions/ learns where to edit; GitHub folds the generated modules'
    diffs (git's own reading of .gitattributes), so a review reads reference/engine.py's."""
    said = (ROOT / "solutions" / "__init__.py").read_text(encoding="utf-8")
    assert "Generated by `kata build` from reference/engine.py" in said, said
    paths = [s.source(impl) for s in STAGES for impl in ("solutions", "exercises")]
    out = subprocess.run(["git", "check-attr", "linguist-generated", "--", *paths, "reference/engine.py"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    marked = {line.split(": ")[0] for line in out if line.endswith(": true")}
    assert marked == set(paths), sorted(set(paths) - marked) or sorted(marked - set(paths))
