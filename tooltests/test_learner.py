"""The learner's commands (kata/learner.py): status, check, hint, diff, reset, watch.

Every test works in a throwaway copy of the kata, so the real exercises/ is never
touched.  The copies share a test-result cache warmed once per session (results are
keyed by file content, so a copied cache is as valid as the original).
"""
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autograd_kata import cli
from autograd_kata.core import state
from autograd_kata.core.build import strip_markers
from autograd_kata.core.manifest import STAGES, stage
from kit import fresh_copy, run_kata, stage_test_count

ROOT = Path(__file__).resolve().parent.parent

# Many tests run pytest in a child process (the first one every stage, for the shared cache).
pytestmark = pytest.mark.timeout(120)
COLOUR_VARS = ("NO_COLOR", "FORCE_COLOR", "KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "KATA_WATCH_POLL")

HINT_EN = """# Stage 1: the Value skeleton

## Level 1 - a nudge
EN-ONE: a Value stores its number.

## Level 2 - a closer look
EN-TWO: store float(data).

## Level 3 - nearly the answer
EN-THREE: self.data = float(data)
"""
HINT_JA = """# ステージ1: Value の骨格

## Level 1 - ヒント
JA-ONE: 数を保存します。

## Level 2 - もう少し
JA-TWO: float(data)

## Level 3 - ほぼ答え
JA-THREE: self.data = float(data)
"""


def copy_kata(target: Path) -> Path:
    for name in ("exercises", "solutions", "tests"):
        shutil.copytree(ROOT / name, target / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, target / name)
    for lang in ("en", "ja"):
        (target / "hints" / lang).mkdir(parents=True)
    (target / stage(1).hint_file("en")).write_text(HINT_EN, encoding="utf-8")
    (target / stage(1).hint_file("ja")).write_text(HINT_JA, encoding="utf-8")
    return target


@pytest.fixture(scope="session")
def template(tmp_path_factory):
    """A pristine copy whose every stage result is already cached."""
    root = copy_kata(tmp_path_factory.mktemp("template"))
    for n in (1, 2):  # make sure the pristine stubs really are what the generator writes
        s = stage(n)
        assert (root / s.source("exercises")).read_text() == state.pristine_stub(s, root)
    state.cached_results(STAGES, root)
    return root


@pytest.fixture
def kata(template, tmp_path, monkeypatch):
    return fresh_copy(template, tmp_path, monkeypatch, unset=COLOUR_VARS)




def solve(root, n, change=None):
    s = stage(n)
    text = strip_markers((root / s.source("solutions")).read_text(encoding="utf-8"))
    if change:
        text = change(text)
    (root / s.source("exercises")).write_text(text, encoding="utf-8")


def mul_rule_forgets_the_operand(text):
    """Stage 2's mul rule hands self out.grad alone (whether the rules add or assign)."""
    for op in ("+=", "="):
        rule = f"self.grad {op} other.data * out.grad"
        if rule in text:
            return text.replace(rule, f"self.grad {op} out.grad", 1)
    raise AssertionError("the stage 2 reference has no mul rule of the expected shape")


def no_runs(monkeypatch):
    """Make any test run an error: what follows must come from the cache."""
    def refuse(*args, **kwargs):
        raise AssertionError("the tests were run although the cache should have answered")
    monkeypatch.setattr("autograd_kata.core.runner.run", refuse)


# --- help and start-up ------------------------------------------------------------

def test_help_lists_every_learner_command_and_each_has_its_own_help(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for command in ("status", "check", "hint", "diff", "reset", "watch"):
        assert command in out
        with pytest.raises(SystemExit) as done:
            cli.main([command, "--help"])
        assert done.value.code == 0
        assert f"usage: kata {command}" in capsys.readouterr().out


def test_help_imports_none_of_the_heavy_parts():
    """What keeps ``kata --help`` fast; its time is measured in benchmarks/responsiveness.py."""
    code = ("import sys; import autograd_kata.cli; p = autograd_kata.cli.parser(); "
            "print(*[m for m in ('autograd_kata.core.runner', 'difflib', 'watchdog', 'xml.etree.ElementTree') "
            "if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [], f"building kata's parser imported {proc.stdout.split()}"


# --- status -----------------------------------------------------------------------

def test_status_has_one_row_per_stage_and_names_the_next_command(kata, capsys, monkeypatch):
    no_runs(monkeypatch)  # every module is its pristine stub: "not started" needs no test run
    code, out, _ = run_kata(capsys, "status")
    assert code == 0
    lines = out.splitlines()
    for s in STAGES:
        row = next(line for line in lines if line.split()[:1] == [str(s.number)])
        assert s.title in row and row.split()[-3:] == ["-", "not", "started"], row
    assert lines[-1] == ("Next: stage 1 (Value skeleton): edit exercises/stage01_value.py, "
                         "then run: kata check 1")


def test_a_touched_stub_is_run_and_the_others_are_not(kata, capsys, monkeypatch):
    path = kata / stage(1).source("exercises")
    path.write_text(path.read_text() + "\n# started\n")
    ran = []
    from autograd_kata.core import runner
    original = runner.run
    monkeypatch.setattr(runner, "run", lambda impl, stages, root: ran.append([s.number for s in stages])
                        or original(impl, stages, root))
    _, out, _ = run_kata(capsys, "status")
    assert ran == [[1]]
    row = next(line for line in out.splitlines() if line.split()[:1] == ["1"])
    assert f"0/{stage_test_count(1)}" in row and "in progress" in row


def test_kata_alone_runs_status(kata, capsys):
    assert run_kata(capsys)[1] == run_kata(capsys, "status")[1]


def test_status_answers_from_the_cache_until_a_file_changes(kata, capsys, monkeypatch):
    solve(kata, 1)
    solve(kata, 2, mul_rule_forgets_the_operand)
    _, out, _ = run_kata(capsys, "status")  # runs stages 1 and 2 only: their files changed
    rows = {line.split()[0]: line for line in out.splitlines() if line[:2].strip().isdigit()}
    def tally(row):
        passed, total = row.split()[-2 if row.rstrip().endswith("done") else -3].split("/")
        return int(passed), int(total)
    assert rows["1"].rstrip().endswith("done") and tally(rows["1"])[0] == tally(rows["1"])[1] > 0
    passed, total = tally(rows["2"])
    assert rows["2"].rstrip().endswith("in progress") and 0 < passed < total
    assert out.splitlines()[-1].startswith("Next: finish stage 2 (add and mul)")
    no_runs(monkeypatch)  # its time: benchmarks/responsiveness.py
    assert run_kata(capsys, "status")[1] == out


def test_the_cache_key_covers_the_module_its_tests_and_the_shared_test_code(kata):
    s = stage(1)
    before = state.result_key(s, kata)
    for name in (s.source("exercises"), s.test_file, "conftest.py", "tests/expect.py"):
        path = kata / name
        original = path.read_bytes()
        path.write_bytes(original + b"\n# touched\n")
        assert state.result_key(s, kata) != before, name
        path.write_bytes(original)
    assert state.result_key(s, kata) == before
    assert state.result_key(s, kata, "solutions") != before


# --- check ------------------------------------------------------------------------

def test_check_lists_failures_with_their_teaching_messages(kata, capsys):
    code, out, _ = run_kata(capsys, "check", "1")
    assert code == 1
    assert f"Stage 1 - Value skeleton: 0/{stage_test_count(1)} tests pass" in out
    assert "test_data_is_stored_as_a_float" in out
    assert "not written yet: stage 1: write Value.__init__ (kata hint 1)" in out
    assert "Traceback" not in out and "[stage01_value]" not in out


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_an_equals_plus_typo_is_named_as_the_typo_it_is(kata, capsys, monkeypatch, lang):
    """`self.grad =+ x` is `self.grad = +x`: the failure says the mul rule assigns (=), and the
    learner who typed `=+` is shown their line and the swapped characters, in their language."""
    monkeypatch.setenv("KATA_LANG", lang)
    rule = "self.grad += other.data * out.grad"
    solve(kata, 6, lambda text: text.replace(rule, rule.replace("+=", "=+"), 1))
    line = next(i for i, text in enumerate((kata / stage(6).source("exercises")).read_text().splitlines(), 1)
                if "=+ other.data" in text)
    code, out, _ = run_kata(capsys, "check", "6")
    assert code == 1 and "=+" in out, out
    note = next(text.strip() for text in out.splitlines() if f"{stage(6).source('exercises')}:{line}:" in text)
    assert "`self.grad =+ other.data * out.grad" in note and "`+=`" in note, note
    assert ("swapped" in note) if lang == "en" else ("入れ替わった" in note), note
    solve(kata, 6, lambda text: text.replace(rule, rule.replace("+=", "="), 1))
    code, out, _ = run_kata(capsys, "check", "6")
    assert code == 1 and "=+" not in out, "a plain = is not called a typo"


def test_check_shows_the_first_broken_rule_and_folds_the_rest_all_shows_each(kata, capsys):
    solve(kata, 2, mul_rule_forgets_the_operand)
    code, every, _ = run_kata(capsys, "check", "2", "--all")
    assert code == 1
    each = [line for line in every.splitlines() if line.startswith("✗ ")]
    assert "✗ test_mul_rule_multiplies_by_out_grad" in each and len(each) >= 2
    assert every.count("-> kata hint 2") >= len(each)  # each rule's own message
    assert "Failed Checks" not in every and "-----" not in every
    code, out, _ = run_kata(capsys, "check", "2")
    assert code == 1
    failures = [line for line in out.splitlines() if line.startswith("✗ ")]
    assert failures == each[:1] and "a.grad is " in out and "-> kata hint 2" in out
    folded = [line.strip() for line in out.splitlines() if line.startswith("  +")]
    assert folded == [f"+{len(each) - 1} more of the same kind (a wrong value): "
                      f"{', '.join(line[2:] for line in each[1:4])}"
                      + (f" and {len(each) - 4} more" if len(each) > 4 else "")]
    assert "kata check 2 --all" in out


def keeps_data_as_given(text):
    """Stage 1 as the article's first listing: no type check, data stored as it came."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("if not isinstance(data"))
    assert "raise TypeError" in lines[start + 1] and lines[start + 2].strip() == "self.data = float(data)", \
        lines[start:start + 3]
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    return "".join(lines[:start] + [f"{indent}self.data = data\n"] + lines[start + 3:])


def test_folding_claims_no_common_cause_the_numbers_do_not_prove(kata, capsys):
    """Stage 1 with data kept as given (the article's first listing): the float test and the
    repr test fail because of it, but the TypeError tests fail because nothing checks the
    type -- another mistake.  The fold names their kind, never one cause for all."""
    solve(kata, 1, keeps_data_as_given)
    code, out, _ = run_kata(capsys, "check", "1")
    assert code == 1 and "test_data_is_stored_as_a_float" in out
    folded = [line.strip() for line in out.splitlines() if line.startswith("  +")]
    assert folded[0].startswith("+4 more of the same kind (a wrong value): "), out
    assert "test_a_non_number_is_a_type_error" in folded[0]
    assert "cause" not in out


def test_check_success_congratulates_teaches_and_points_on(kata, capsys):
    solve(kata, 1)
    code, out, _ = run_kata(capsys, "check", "1")
    assert code == 0
    assert f"all {stage_test_count(1)} tests pass" in out
    assert stage(1).lesson in out
    assert "kata diff 1" in out and "kata check 2" in out


def test_check_without_a_number_takes_the_first_unfinished_stage(kata, capsys):
    assert "Stage 1 - " in run_kata(capsys, "check")[1]
    solve(kata, 1)
    code, out, _ = run_kata(capsys, "check")
    assert code == 1 and "Stage 2 - add and mul" in out


AFTER_THE_LAST = str(len(STAGES) + 1)


@pytest.mark.parametrize("argv", [["check", AFTER_THE_LAST], ["hint", "0"], ["diff", "x"],
                                  ["reset", AFTER_THE_LAST, "--yes"], ["watch", str(len(STAGES) + 4)]])
def test_an_unknown_stage_lists_the_valid_ones(kata, capsys, argv):
    code, out, err = run_kata(capsys, *argv)
    assert code == 2
    assert f"the stages are {', '.join(str(s.number) for s in STAGES)}" in err
    assert out == ""


# --- hint -------------------------------------------------------------------------

def test_hint_shows_the_next_unseen_level_then_stays_at_three(kata, capsys):
    outs = [run_kata(capsys, "hint", "1") for _ in range(4)]
    assert all(code == 0 for code, _, _ in outs)
    assert "EN-ONE" in outs[0][1] and "EN-TWO" not in outs[0][1] and "kata hint 1 (level 2 of 3)" in outs[0][1]
    assert "EN-TWO" in outs[1][1] and "EN-ONE" not in outs[1][1]
    assert "EN-THREE" in outs[2][1] and "last hint" in outs[2][1]
    assert "EN-THREE" in outs[3][1] and "already the last hint" in outs[3][1]
    assert "EN-ONE" in run_kata(capsys, "hint", "1", "--level", "1")[1]
    assert "EN-THREE" in run_kata(capsys, "hint", "1")[1]  # an explicit level does not lower progress


def test_hint_progress_is_per_stage_and_kept_in_dot_kata(kata, capsys):
    run_kata(capsys, "hint", "1")
    assert state.hint_seen(stage(1), kata) == 1 and state.hint_seen(stage(2), kata) == 0
    assert (kata / ".kata" / "progress.json").is_file()


@pytest.mark.parametrize("how, env, want", [
    (["--lang", "ja"], {}, "JA-ONE"),
    ([], {"KATA_LANG": "ja"}, "JA-ONE"),
    ([], {"LANG": "ja_JP.UTF-8"}, "JA-ONE"),
    ([], {"LC_ALL": "C.UTF-8", "LANG": "ja_JP.UTF-8"}, "EN-ONE"),   # LC_ALL wins over LANG
    ([], {"KATA_LANG": "en", "LANG": "ja_JP.UTF-8"}, "EN-ONE"),     # KATA_LANG wins over the locale
    (["--lang", "en"], {"KATA_LANG": "ja"}, "EN-ONE"),               # --lang wins over everything
    ([], {}, "EN-ONE"),
])
def test_hint_language(kata, capsys, monkeypatch, how, env, want):
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    code, out, _ = run_kata(capsys, "hint", "1", *how)
    assert code == 0 and want in out
    if want == "JA-ONE":
        assert "ステージ1" in out


def test_a_missing_translation_falls_back_to_english_and_says_so(kata, capsys):
    (kata / stage(1).hint_file("ja")).unlink()
    code, out, _ = run_kata(capsys, "hint", "1", "--lang", "ja")
    # the notice speaks the language the learner asked for
    assert code == 0 and "EN-ONE" in out and "ステージ1の日本語のヒントはまだありません。英語で表示します" in out
    code, out, _ = run_kata(capsys, "hint", "1", "--level", "1", "--lang", "en")
    assert code == 0 and "EN-ONE" in out and "hint for stage 1 yet" not in out  # nothing missing in English


def test_a_stage_without_hints_says_so_plainly(kata, capsys):
    for lang in ("en", "ja"):
        (kata / stage(2).hint_file(lang)).unlink(missing_ok=True)
    code, out, err = run_kata(capsys, "hint", "2")
    assert code == 1 and out == ""
    assert "no hints for stage 2 yet" in err and "hints/en/stage02_add_mul.md is missing" in err
    assert state.hint_seen(stage(2), kata) == 0


# --- diff -------------------------------------------------------------------------

def test_diff_is_refused_before_the_stage_passes(kata, capsys):
    code, out, err = run_kata(capsys, "diff", "1")
    assert code == 1 and out == ""  # not one line of the answer
    assert "does not pass yet" in err and "kata diff 1 --reveal" in err and "kata hint 1" in err


def test_diff_reveal_shows_the_reference_anyway(kata, capsys):
    code, out, _ = run_kata(capsys, "diff", "1", "--reveal")
    assert code == 0
    assert "+        self.data = float(data)" in out
    assert "BEGIN SOLUTION" not in out and "END SOLUTION" not in out


def test_diff_after_passing_compares_with_the_reference_without_markers(kata, capsys):
    solve(kata, 1, lambda t: t.replace("return f\"Value(data={self.data}, grad={self.grad})\"",
                                       "return 'Value(data=%s, grad=%s)' % (self.data, self.grad)"))
    code, out, _ = run_kata(capsys, "diff", "1")
    assert code == 0
    assert out.startswith("--- exercises/stage01_value.py (yours)\n+++ solutions/stage01_value.py (reference)\n")
    assert "-        return 'Value(data=%s, grad=%s)' % (self.data, self.grad)" in out
    assert "SOLUTION" not in out
    assert "\033[" not in out  # not a terminal: no colour


def test_diff_of_an_identical_module_says_so(kata, capsys):
    solve(kata, 1)
    code, out, _ = run_kata(capsys, "diff", "1")
    assert code == 0 and "identical to the reference" in out


def test_diff_without_a_reference_says_so_plainly(kata, capsys):
    shutil.rmtree(kata / "solutions")
    code, out, err = run_kata(capsys, "diff", "1", "--reveal")
    assert code == 1 and out == ""
    assert "no reference solution" in err and "solutions/stage01_value.py is missing" in err


# --- colour -----------------------------------------------------------------------

def test_force_color_colours_and_no_color_wins(kata, capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert "\033[31m" in run_kata(capsys, "diff", "1", "--reveal")[1]
    monkeypatch.setenv("NO_COLOR", "1")
    for argv in (["diff", "1", "--reveal"], ["status"], ["check", "1"], ["hint", "1"]):
        assert "\033[" not in run_kata(capsys, *argv)[1], argv


def tty_output(root, argv, extra_env):
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in COLOUR_VARS}
    env.update(extra_env)
    proc = subprocess.Popen([sys.executable, "-m", "autograd_kata.cli", *argv], cwd=root, stdout=slave,
                            stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 20)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=20)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_gets_colour_unless_no_color(kata):
    assert "\033[" in tty_output(kata, ["diff", "1", "--reveal"], {})
    plain = tty_output(kata, ["diff", "1", "--reveal"], {"NO_COLOR": "1"})
    assert "\033[" not in plain and "self.data = float(data)" in plain


# --- reset ------------------------------------------------------------------------

def test_reset_backs_up_the_learners_file_names_it_and_restores_the_stub(kata, capsys):
    path = kata / stage(1).source("exercises")
    stub = path.read_text()
    path.write_text("# my precious work\n")
    code, out, _ = run_kata(capsys, "reset", "1", "--yes")
    assert code == 0
    assert path.read_text() == stub
    saved = [line.split(" to ", 1)[1] for line in out.splitlines() if line.startswith("Saved your ")]
    assert len(saved) == 1 and saved[0].startswith(".kata/backups/stage01_value.")
    assert (kata / saved[0]).read_text() == "# my precious work\n"


def test_reset_twice_keeps_both_backups(kata, capsys):
    path = kata / stage(1).source("exercises")
    for text in ("# first\n", "# second\n"):
        path.write_text(text)
        assert run_kata(capsys, "reset", "1", "-y")[0] == 0
    kept = sorted(p.read_text() for p in (kata / ".kata" / "backups").iterdir())
    assert kept == ["# first\n", "# second\n"]


def test_reset_of_an_untouched_stub_changes_nothing(kata, capsys):
    code, out, _ = run_kata(capsys, "reset", "1", "--yes")
    assert code == 0 and "nothing to reset" in out
    assert not (kata / ".kata" / "backups").exists()


def test_reset_without_a_terminal_and_without_yes_refuses(kata, capsys, monkeypatch):
    path = kata / stage(1).source("exercises")
    path.write_text("# mine\n")
    with open(os.devnull) as nothing:
        monkeypatch.setattr(sys, "stdin", nothing)
        code, _, err = run_kata(capsys, "reset", "1")
    assert code != 0
    assert "kata reset 1 --yes" in err and "no terminal" in err
    assert path.read_text() == "# mine\n" and not (kata / ".kata" / "backups").exists()


@pytest.mark.parametrize("answer, resets", [("y", True), ("n", False), ("", False)])
def test_reset_on_a_terminal_asks_first(kata, capsys, monkeypatch, answer, resets):
    class Terminal:
        def isatty(self):
            return True
    monkeypatch.setattr(sys, "stdin", Terminal())
    questions = []
    monkeypatch.setattr("builtins.input", lambda q: questions.append(q) or answer)
    path = kata / stage(1).source("exercises")
    path.write_text("# mine\n")
    code, _, _ = run_kata(capsys, "reset", "1")
    assert len(questions) == 1 and "[y/N]" in questions[0]
    assert (code == 0) == resets
    assert (path.read_text() == "# mine\n") != resets


@pytest.mark.parametrize("folder", [".kata-pristine/exercises", ".kata/pristine"])
def test_reset_in_a_student_copy_uses_the_shipped_pristine_stubs(kata, capsys, folder):
    pristine = kata / folder
    pristine.mkdir(parents=True)
    for s in STAGES:
        shutil.copy(kata / s.source("exercises"), pristine / f"{s.module}.py")
    stub = (kata / stage(1).source("exercises")).read_text()
    shutil.rmtree(kata / "solutions")
    solve_text = "class Value:\n    pass\n"
    (kata / stage(1).source("exercises")).write_text(solve_text)
    code, _, _ = run_kata(capsys, "reset", "1", "--yes")
    assert code == 0 and (kata / stage(1).source("exercises")).read_text() == stub
    code, out, _ = run_kata(capsys, "status")
    assert "not started" in out.splitlines()[1]


def git(root, *args):
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def test_reset_in_a_student_git_clone_uses_the_release_commit(kata, capsys):
    shutil.rmtree(kata / "solutions")
    stub = (kata / stage(1).source("exercises")).read_text()
    git(kata, "init", "-q")
    git(kata, "add", "exercises", "tests")
    git(kata, "commit", "-q", "-m", "release")
    (kata / stage(1).source("exercises")).write_text("# committed work\n")
    git(kata, "commit", "-q", "-am", "my work")  # HEAD is no longer the stub
    code, _, _ = run_kata(capsys, "reset", "1", "--yes")
    assert code == 0 and (kata / stage(1).source("exercises")).read_text() == stub


def test_reset_with_no_pristine_copy_anywhere_refuses_and_touches_nothing(kata, capsys):
    shutil.rmtree(kata / "solutions")
    path = kata / stage(1).source("exercises")
    path.write_text("# mine\n")
    code, _, err = run_kata(capsys, "reset", "1", "--yes")
    assert code == 1 and "cannot find the original stub of stage 1" in err
    assert path.read_text() == "# mine\n"


# --- watch ------------------------------------------------------------------------

class Reader:
    """Collect a process's output in the background; wait for a text to appear."""

    def __init__(self, proc):
        self.text, self.proc = "", proc
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            self.text += line

    def wait_for(self, what, after=0, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if what in self.text[after:]:
                return self.text.index(what, after)
            time.sleep(0.05)
        raise AssertionError(f"{what!r} did not appear within {timeout} s; output:\n{self.text}")


@pytest.mark.timeout(40)
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C cannot be sent to a child process this way on Windows")
@pytest.mark.parametrize("poll", [False, True], ids=["events", "polling"])
def test_watch_reruns_on_save_and_stops_cleanly_on_ctrl_c(kata, poll):
    env = {k: v for k, v in os.environ.items() if k not in COLOUR_VARS}
    if poll:
        env["KATA_WATCH_POLL"] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "autograd_kata.cli", "watch", "1"], cwd=kata, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out = Reader(proc)
        first = out.wait_for("Press Ctrl-C to stop.")
        assert f"0/{stage_test_count(1)} tests pass" in out.text and ("polling" if poll else "file events") in out.text
        solve(kata, 1)
        out.wait_for(f"all {stage_test_count(1)} tests pass", after=first)
        out.wait_for("Press Ctrl-C to stop.", after=first + 1)
        proc.send_signal(2)  # SIGINT, as Ctrl-C sends
        assert proc.wait(timeout=10) == 0
        out.thread.join(timeout=5)
        assert "Stopped watching." in out.text and "Traceback" not in out.text
        assert out.text.count("tests pass") == 2  # reading the files does not count as a save
    finally:
        if proc.poll() is None:
            proc.kill()


def test_watch_debounces_a_burst_of_writes(kata, monkeypatch):
    from autograd_kata.learner import watch as learner_watch
    monkeypatch.setattr(learner_watch, "POLL_INTERVAL", 0.05)
    monkeypatch.setattr(learner_watch, "DEBOUNCE", 0.2)
    folder = kata / "exercises"
    seen = learner_watch.snapshot(folder)
    changed = threading.Event()
    path = kata / stage(1).source("exercises")

    def burst():
        for i in range(5):
            path.write_text(f"# write {i}\n")
            time.sleep(0.05)
    writer = threading.Thread(target=burst)
    writer.start()
    started = time.monotonic()
    after = learner_watch.wait_for_change(folder, changed, seen)
    writer.join()
    assert time.monotonic() - started >= 0.2 + 4 * 0.05 - 0.02  # waited for the last write, then quiet
    assert after == learner_watch.snapshot(folder) and path.read_text() == "# write 4\n"
