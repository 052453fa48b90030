"""The learner's runner (core/runner.py, core/explain.py, learner/feedback.py, learner/feel.py):
one results channel, a run that is ours, hangs in seconds, crashes with a place,
follow-on failures folded, numbers from the learner's own engine, and the seams.

Every test works in a throwaway copy of the kata; most run ``kata`` in this process
(``cli.main``), the ones about pipes, terminals and time in a child process.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata import cli
from autograd_kata.core import explain, manifest, runner, state
from autograd_kata.core.build import strip_markers
from autograd_kata.core.manifest import stage
from kit import kata_copy, run_kata, stage_test_count

ROOT = Path(__file__).resolve().parent.parent
ENV_VARS = ("NO_COLOR", "FORCE_COLOR", "KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "PYTEST_ADDOPTS",
            "PYTEST_PLUGINS", "TERM")

pytestmark = pytest.mark.timeout(120)  # each test runs pytest in a child process, some several times


@pytest.fixture
def kata(tmp_path, monkeypatch):
    return kata_copy(tmp_path, monkeypatch, ENV_VARS)


def kata_child(root, *argv, env=None, **kwargs):
    full = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "autograd_kata.cli", *argv], cwd=root, env=full,
                          capture_output=True, text=True, timeout=120, **kwargs)


def solve(root, n, change=None):
    s = stage(n)
    text = strip_markers((root / s.source("solutions")).read_text(encoding="utf-8"))
    if change:
        changed = change(text)
        assert changed != text, "the edit did not apply: the reference changed under this test"
        text = changed
    (root / s.source("exercises")).write_text(text, encoding="utf-8")


def wrong_add_rule(text):
    """Stage 2's add rule hands each parent 2 * out.grad (whatever the rule's operator)."""
    for op in ("+=", "="):
        rule = f"self.grad {op} out.grad"
        if rule in text:
            return text.replace(rule, f"self.grad {op} 2 * out.grad", 1)
    return text


def forgot_to_pop(text):
    """Stage 5's topological order peeks at the stack instead of popping: it never ends."""
    return (text.replace("node, inputs_done = stack.pop()", "node, inputs_done = stack[-1]  # forgot to pop")
                .replace("order.append(node)", "if node not in order:\n                    order.append(node)"))


def line_of(root, n, needle):
    lines = (root / stage(n).source("exercises")).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


# --- one results channel -------------------------------------------------------

def test_a_long_message_arrives_whole(kata):
    test_file = kata / stage(1).test_file
    test_file.write_text(test_file.read_text() + (
        "\n\ndef test_a_long_story():\n"
        "    from expect import RuleBroken\n"
        "    raise RuleBroken('\\n'.join(f'line {i} of the story' for i in range(60)))\n"))
    got = runner.run("solutions", [stage(1)], kata)[1]
    story = next(t for t in got.tests if t.short == "test_a_long_story")
    assert story.status == "failed"
    assert story.message.splitlines() == [f"line {i} of the story" for i in range(60)]
    assert got.passed == got.total - 1 and not got.ok


def test_fewer_reported_than_collected_is_a_problem_never_a_pass():
    data = {"collected": 3, "exitstatus": 0, "tests": [
        {"name": "a", "stage": 1, "outcome": "passed", "message": ""},
        {"name": "b", "stage": 1, "outcome": "passed", "message": ""}]}
    got = runner.parse_results(data, "exercises", [stage(1)])[1]
    assert got.passed == 2 and "2 of 3" in got.problem and not got.ok
    data["tests"].append({"name": "c", "stage": 1, "outcome": "mystery", "message": ""})
    got = runner.parse_results(data, "exercises", [stage(1)])[1]
    assert got.ok is False and got.tests[-1].status == "error"  # an unknown outcome is not a pass


# --- the run is ours -----------------------------------------------------------

@pytest.mark.parametrize("how", ["PYTEST_ADDOPTS", "pytest.ini"])
def test_the_learners_pytest_settings_do_not_leak_in(kata, capsys, monkeypatch, how):
    solve(kata, 2, wrong_add_rule)
    if how == "PYTEST_ADDOPTS":
        monkeypatch.setenv("PYTEST_ADDOPTS", "-k computes")
    else:
        (kata / "pytest.ini").write_text("[pytest]\naddopts = -k computes\n")
    code, out, _ = run_kata(capsys, "check", "2")
    assert code == 1 and "Well done" not in out
    total = int(out.split(" tests pass")[0].rsplit("/", 1)[1])
    assert total >= 5 and out.count("computes") <= 2  # every test ran, not just the two named "computes"
    assert not state.known_results([stage(2)], kata).get(2, runner.StageResult(stage(2), "")).ok


def test_only_a_full_run_is_cached(kata):
    solve(kata, 1)
    selected = runner.run("exercises", [stage(1)], kata, extra=("-k", "float"))[1]
    assert selected.all_passed and not selected.complete and not selected.ok
    state.cached_results([stage(1)], kata, run=lambda *a, **k: {1: selected})
    assert state.known_results([stage(1)], kata) == {}  # a selection is no verdict on the stage
    full = state.cached_results([stage(1)], kata)[1]
    assert full.ok and state.known_results([stage(1)], kata)[1].ok


def test_blocked_plugins_cover_the_reordering_ones_and_an_absent_one_is_harmless(kata):
    for name in ("randomly", "xdist", "cacheprovider", "random_order", "rerunfailures", "order"):
        assert name in runner.BLOCKED_PLUGINS
    command = runner.pytest_command("solutions", [stage(1)], kata / "r.json", root=kata)
    command += ["-p", "no:a_plugin_nobody_installed"]
    proc = subprocess.run(command, cwd=kata, env=runner.child_env("solutions"), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((kata / "r.json").read_text())
    assert data["collected"] == len(data["tests"]) > 0
    assert all(t["outcome"] == "passed" for t in data["tests"])


# --- hangs in seconds ------------------------------------------------------------

def test_kata_check_on_an_endless_topological_order_returns_with_the_line(kata):
    """The hang is found by the stage's time limit (its time: benchmarks/responsiveness.py)."""
    solve(kata, 5, forgot_to_pop)
    proc = kata_child(kata, "check", "5")
    assert proc.returncode == 1
    out = proc.stdout
    loop = line_of(kata, 5, "while stack:")
    spots = [f"exercises/stage05_backward.py:{n}" for n in range(loop, loop + 8)]
    assert any(spot in out for spot in spots), out
    assert "An infinite loop?" in out and "not run: the stage stopped at the first hang" in out
    assert 5 not in state.known_results([stage(5)], kata) or not state.known_results([stage(5)], kata)[5].ok


def test_with_the_thread_method_one_hanging_stage_leaves_the_others_tested(kata):
    solve(kata, 1)
    solve(kata, 5, forgot_to_pop)
    got = runner.run("exercises", [stage(1), stage(5)], kata, extra=("-o", "timeout_method=thread"))
    assert got[1].ok is False and got[1].all_passed  # passed, but not complete (extra args): not cached
    assert got[5].problem_kind == "hang" and got[5].problem.startswith("hung: ")
    assert "exercises/stage05_backward.py:" in got[5].problem and "infinite loop?" in got[5].problem


# --- every crash has a place -------------------------------------------------------

@pytest.mark.parametrize("n, change, needle, sentence", [
    (5, lambda t: t.replace("out._backward = _backward\n", "out._backward = _backward()\n", 1),
     "out._backward = _backward()", "calls the rule once, now, and stores what it returns (None)"),
    (3, lambda t: t.replace("return self + other", "return other + self", 1),
     "return other + self", "with a plain number on the left Python asks `__radd__` again"),
    (8, lambda t: t.replace("return [n(x) for n in self.neurons]",
                            "out = [n(x) for n in self.neurons]\n        return out[0] if len(out) == 1 else out", 1),
     None, "In this kata a Layer always returns a list"),
])
def test_a_crash_shows_the_learners_line_and_a_sentence(kata, capsys, n, change, needle, sentence):
    solve(kata, n, change)
    code, out, _ = run_kata(capsys, "check", str(n), "--all")
    assert code == 1
    assert "crashed: " in out and sentence in out, out
    if needle:
        assert f"line {line_of(kata, n, needle)}" in out or f":{line_of(kata, n, needle)}" in out
    assert f"at exercises/{stage(n).module}.py:" in out or "in the test, at tests/" in out


def test_a_sandboxed_exception_is_placed_by_its_learner_frames():
    error = RecursionError("maximum recursion depth exceeded")
    # the grading sandbox's shape: (file relative to the submission, line, text), no function name
    error.learner_frames = [("exercises/stage03_coercion.py", 41, "return other + self")] * 5
    text = explain.crash(error, "exercises/stage03_coercion.py", Path("/nowhere"), 3)
    assert text.splitlines()[1] == "  at exercises/stage03_coercion.py:41: return other + self"
    assert "`__radd__` (line 41)" in text and text.endswith("-> kata hint 3")
    error = TypeError("'NoneType' object is not callable")
    error.learner_frames = [("submission/stage05_backward.py", 12, "node._backward()")]
    text = explain.crash(error, "exercises/stage05_backward.py", Path("/nowhere"), 5)
    assert text.splitlines()[1] == "  at exercises/stage05_backward.py:12: node._backward()"


def test_an_unknown_crash_states_the_facts_and_blames_nothing():
    try:
        {}["missing"]
    except KeyError as error:
        text = explain.crash(error, "exercises/stage02_add_mul.py", Path("/nowhere"), 2)
    assert text.startswith("crashed: KeyError: 'missing'")
    assert text.splitlines()[1:] == ["  -> kata hint 2"]


# --- the most basic failure first -----------------------------------------------------

def test_an_unwritten_stub_comes_before_a_wrong_value_and_the_rest_is_folded(kata, capsys):
    solve(kata, 4, lambda t: t.replace("(1 - t * t)", "(1 - t)", 1).replace(
        '"""A new node e**self, label \'exp\'."""',
        '"""A new node e**self, label \'exp\'."""\n'
        '        raise NotImplementedError("stage 4: write Value.exp (kata hint 4)")', 1))
    code, out, _ = run_kata(capsys, "check", "4")
    assert code == 1
    failures = [line for line in out.splitlines() if line.startswith("✗ ")]
    assert len(failures) == 1 and "test_exp_" in failures[0]  # the tanh tests come first in the file
    assert out.splitlines()[out.splitlines().index(failures[0]) + 1].strip() == \
        "not written yet: stage 4: write Value.exp (kata hint 4)"
    folded = [line.strip() for line in out.splitlines() if line.startswith("  +")]
    assert len(folded) == 1 and " more failing another way (a wrong value): test_tanh_" in folded[0]
    assert "of the same kind" not in out  # an unwritten exp is not the kind of a wrong tanh slope
    code, every, _ = run_kata(capsys, "check", "4", "--all")
    shown = [line for line in every.splitlines() if line.startswith("✗ ")]
    assert len(shown) >= 2 and "test_exp_" in shown[0], every
    assert all("tanh" in line and "exp" not in line for line in shown[1:]), every


# --- feel the answers ----------------------------------------------------------------

def test_passing_stages_6_7_8_print_numbers_from_the_learners_engine(kata, capsys):
    for n in (6, 7, 8):
        solve(kata, n)
    _, six, _ = run_kata(capsys, "check", "6")
    assert "the `=` rules you started from gave a.grad = 3; your `+=` gives 6." in six
    _, seven, _ = run_kata(capsys, "check", "7")
    fit = next(line for line in seven.splitlines() if "fitting y = 2x - 1" in line)
    good, bad = (float(part.split()[0]) for part in fit.split("final loss ")[1].split(" with zero_grad(), "))
    assert good < 1e-4 < 0.1 < bad
    assert "moves w from 0 to 0.5, where the slope is -3.5 by a fresh forward pass" in seven
    assert "on your stage-6 engine gives w.grad = -35, silently: neither slope." in seven
    assert "the second pass still gives -5: the slope at the old w" in seven
    assert "Without it, your engine refuses (\"backward() was called through a graph a second time" in seven
    _, eight, _ = run_kata(capsys, "check", "8")
    mlp = next(line for line in eight.splitlines() if "Your own MLP" in line)
    finals = mlp.split("final loss ")[1].split(" with zero_grad(), ")
    good, bad = (float(part.split()[0].rstrip(",")) for part in finals)
    assert good < bad / 5


def test_the_naive_numbers_come_from_the_stub_the_learner_started_from(kata, capsys):
    """Stage 6's 'before' is computed, not printed: a stub whose mul rule already adds gives 6."""
    solve(kata, 6)
    pristine = kata / ".kata" / "pristine"
    pristine.mkdir(parents=True)
    reference = kata / "solutions" / "stage06_accumulate.py"
    (pristine / "stage06_accumulate.py").write_text(strip_markers(reference.read_text()))  # "started" finished
    reference.unlink()  # so the pristine stub is looked up in .kata/pristine
    _, out, _ = run_kata(capsys, "check", "6")
    assert "the `=` rules you started from gave a.grad = 6; your `+=` gives 6." in out


# --- seams ----------------------------------------------------------------------

def test_next_skips_a_stage_already_done(kata, capsys):
    solve(kata, 1)
    solve(kata, 2)
    assert run_kata(capsys, "check", "2")[0] == 0
    _, out, _ = run_kata(capsys, "check", "1")
    assert "go on to stage 3 (constants and reflected ops): kata check 3" in out


def test_a_closed_pipe_keeps_the_stages_exit_code(kata):
    proc = subprocess.Popen(f"{sys.executable} -m autograd_kata.cli check 1 | head -1; "
                            f"echo \"status=${{PIPESTATUS[0]}}\"", shell=True, executable="/bin/bash",
                            cwd=kata, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=120)
    assert out.splitlines()[0].startswith(f"Stage 1 - Value skeleton: 0/{stage_test_count(1)} tests pass")
    assert out.splitlines()[-1] == "status=1" and "BrokenPipe" not in err


def test_an_ascii_only_terminal_never_crashes(kata):
    solve(kata, 1)
    proc = kata_child(kata, "check", "1", env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert f"+ Stage 1 - Value skeleton: all {stage_test_count(1)} tests pass" in proc.stdout


def test_term_dumb_gets_no_cursor_codes(kata):
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env.update(TERM="dumb")
    proc = subprocess.Popen([sys.executable, "-m", "autograd_kata.cli", "check", "1"], cwd=kata,
                            stdout=slave, stderr=slave, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "Stage 1 - Value skeleton" in text and "\033[" not in text


def test_outside_a_kata_it_exits_2_saying_where_it_looked_and_writes_nothing(tmp_path):
    package = Path(cli.__file__).resolve().parent
    before = sorted(p.name for p in package.parent.iterdir())
    for argv in (["status"], ["check", "1"], []):
        proc = kata_child(tmp_path, *argv)
        assert proc.returncode == 2, argv
        assert f"looked for a folder holding both exercises/ and tests/ in {tmp_path.resolve()}" in proc.stderr
        assert proc.stdout == ""
    assert sorted(p.name for p in package.parent.iterdir()) == before
    assert list(tmp_path.iterdir()) == []


def test_watch_and_commands_import_without_a_cycle():
    code = ("import sys; import autograd_kata.learner.watch; "
            "print('autograd_kata.learner.commands' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


# --- kata train --no-zero-grad ------------------------------------------------------

def test_the_no_zero_grad_loop_is_the_train_loop_minus_one_call(kata):
    pytest.importorskip("numpy")
    from autograd_kata.pictures import train as trainer
    sys.path.insert(0, str(kata))
    try:
        import importlib
        engine = importlib.import_module(f"solutions.{manifest.role('mlp').module}")
        xs, ys = trainer.two_moons(12, seed=3)
        _, theirs, _ = trainer.fit(engine, xs, ys, steps=15, batch=4, seed=3)
        _, ours, _ = trainer.fit(engine, xs, ys, steps=15, batch=4, seed=3, zero_grad=True)
        _, without, _ = trainer.fit(engine, xs, ys, steps=15, batch=4, seed=3, zero_grad=False)
    finally:
        sys.path.remove(str(kata))
    assert ours == pytest.approx(theirs, rel=1e-12)  # the same loop as the module's own train()
    assert without[0] == pytest.approx(ours[0]) and without[1:] != ours[1:]


def test_kata_train_no_zero_grad_draws_both_curves_and_prints_both_losses(kata):
    pytest.importorskip("matplotlib")
    out = kata / "both.png"
    proc = kata_child(kata, "train", "--impl", "solutions", "--no-zero-grad", "--steps", "60",
                      "--points", "30", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with_line = next(line for line in proc.stdout.splitlines() if line.startswith("loss over all"))
    without_line = next(line for line in proc.stdout.splitlines() if line.startswith("without zero_grad():"))
    final_with = float(with_line.split("-> ")[1].split(",")[0])
    final_without = float(without_line.split("-> ")[1].split(",")[0])
    assert final_with < final_without
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_pages_run_words_a_missing_report_in_the_learners_language(kata, monkeypatch):
    """The page's in-process run (site/inpage.py) speaks English to the tests, as the child
    does; a run that wrote no report (here a pytest that stops at once, saying so) is told in
    the learner's language all the same."""
    from autograd_kata.core import i18n
    from autograd_kata.site import inpage

    def stops(args):
        print("INTERNALERROR> gone")
        return 3
    monkeypatch.setattr(pytest, "main", stops)
    monkeypatch.setenv(i18n.ENV, "ja")
    monkeypatch.setenv("PYTEST_ADDOPTS", "-q")  # the learner's, taken away for the run only
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    before = dict(os.environ)
    i18n.reset()
    problem = inpage.run(stages=[stage(1)], root=kata)[1].problem
    assert problem == i18n.t("runner.exited", code=3) + "\nINTERNALERROR> gone\n"
    assert "exited" not in problem
    # the run's environment does not outlive it: a later pytest of this process (a tool test
    # after this one) would load no plugins and test KATA_IMPL's folder
    assert dict(os.environ) == before
    i18n.reset()


def test_the_pages_run_names_a_sleep_past_the_limit_a_hang_as_kata_check_does(kata):
    """Measured (issue 28): ``time.sleep(3)`` in ``__init__`` passed every stage-1 test in the page
    and was a hang in ``kata check 1``.  The page's in-process run (site/inpage.py, site/limits.py in
    pytest-timeout's place, not beside it: their --timeout options clashed) gives the terminal's
    verdict: the first test hung, in the learner's ``__init__``.  (On 3.12+, the page's Python,
    sys.monitoring sees no event after the sleep and the call's end decides; below, settrace's
    line events do: test_site.py's test of the plugin alone fails on both without it.)"""
    from autograd_kata.site import inpage
    path = kata / stage(1).source("exercises")
    text = strip_markers((kata / stage(1).source("solutions")).read_text(encoding="utf-8"))
    slept = text.replace("        self.data = float(data)", "        import time; time.sleep(3)\n"
                         "        self.data = float(data)", 1)
    assert slept != text
    path.write_text(slept, encoding="utf-8")
    # another kata's stage 1 imported in this process first (as an earlier tool test may leave it):
    # the run tests this kata's file, not a module of that name from elsewhere
    import importlib.util
    other = kata.parent / "other" / "exercises"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    (other / "stage01_value.py").write_text(text, encoding="utf-8")
    for name, file in (("exercises", other / "__init__.py"), ("exercises.stage01_value", other / "stage01_value.py")):
        spec = importlib.util.spec_from_file_location(name, file, submodule_search_locations=[str(other)]
                                                      if name == "exercises" else None)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    result = inpage.run(stages=[stage(1)], root=kata)[1]
    assert not result.problem, result.problem
    first = result.tests[0]
    assert first.status == "failed" and first.message.startswith("hung: "), first
    assert f"your code was at {stage(1).source('exercises')}:" in first.message and "in __init__" in first.message
    assert not any(t.status == "passed" for t in result.tests), [t.status for t in result.tests]
