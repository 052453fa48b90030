"""What a passing stage shows besides its lesson (learner/feel.py), as the manifest
names it (``Stage.feel``): the article's ``+=`` in stages 2-5 (``kata check`` and
``kata diff``), and in stage 7 a second ``backward()`` after one training step.

Every number is checked against a computation that does not run an engine (plain
floats, finite differences, the chain rule written out), in English and Japanese;
a broken learner engine must cost a line, never the command, and never a claim
its numbers do not bear out.
"""
import dataclasses
import importlib
import re
import shutil
from pathlib import Path

import pytest

from autograd_kata.core import i18n
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.learner import feel, feel_engine, feel_source
from kit import ROOT, fresh_copy, reference, run_kata

pytestmark = pytest.mark.timeout(120)
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = tmp_path_factory.mktemp("feel") / "kata"
    for name in ("exercises", "solutions", "tests"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy(ROOT / name, root / name)
    return root


@pytest.fixture
def kata(template, tmp_path, monkeypatch):
    root = fresh_copy(template, tmp_path, monkeypatch,
                      unset=("LC_ALL", "LC_MESSAGES", "LANG", "NO_COLOR", "FORCE_COLOR", "KATA_IMPL"))
    in_language(monkeypatch, "en")
    yield root
    i18n.reset()


def solve(root, n, change=None):
    """Stage n written as the reference, or as ``change`` makes it."""
    text = reference(n)
    if change:
        changed = change(text)
        assert changed != text, "the edit did not apply: the reference changed under this test"
        text = changed
    (root / stage(n).source("exercises")).write_text(text, encoding="utf-8")


def in_language(monkeypatch, lang):
    monkeypatch.setenv("KATA_LANG", lang)
    i18n.reset()


# --- the fit, computed without an engine ------------------------------------------

XS, TS, LR = (-1.0, 0.0, 1.0, 2.0), (-3.0, -1.0, 1.0, 3.0), 0.1


def loss(w, b):
    return sum((w * x + b - t) ** 2 for x, t in zip(XS, TS, strict=True)) / len(XS)


def slope_w(w, b, h=1e-6):
    return (loss(w + h, b) - loss(w - h, b)) / (2 * h)  # finite differences: no chain rule at all


def slope_b(w, b, h=1e-6):
    return (loss(w, b + h) - loss(w, b - h)) / (2 * h)


def second_pass_without_reset(seed_adds=False):
    """w.grad of a second backward() on a micrograd-style engine (interior grads kept; the
    root's seed assigned, or added as stage 7 does), on the old graph, after zero_grad(). The loss is
    ((((0 + e0) + e1) + e2) + e3) * 4**-1 with e_i = ((w*x_i + b) + -t_i)**2, a tree
    below each w*x_i. Pass one leaves each node n its grad g1(n); pass two adds
    local * g2(parent) on top, so g2(n) = g1(n) + local * g2(parent), and with
    g2(root) = k * g1(root) (k = 1 if the seed assigns 1, 2 if it adds 1) that is
    g2(n) = (depth(n) + k) * g1(n). w*x_i sits at
    depth d_i + 3 (e_i is at d_i = 5, 4, 3, 2), and g1(w*x_i) = 1/4 * 2 * r_i, r_i
    the residual of the forward pass that built the graph (w = b = 0: r_i = -t_i)."""
    depths, k = (5, 4, 3, 2), 2 if seed_adds else 1
    return sum(x * (d + 3 + k) * (2 * (-t) / 4) for x, t, d in zip(XS, TS, depths, strict=True))


def numbers(line):
    return [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", line)]


def test_the_independent_figures_are_what_the_lines_should_say():
    """The figures the next tests expect, derived once more by hand."""
    assert slope_w(0, 0) == pytest.approx(-5, rel=1e-6) and slope_b(0, 0) == pytest.approx(0, abs=1e-6)
    w1, b1 = 0 - LR * slope_w(0, 0), 0 - LR * slope_b(0, 0)
    assert (w1, b1) == (pytest.approx(0.5), pytest.approx(0, abs=1e-7))
    assert slope_w(w1, b1) == pytest.approx(-3.5, rel=1e-6)
    assert second_pass_without_reset() == -35 and second_pass_without_reset(seed_adds=True) == -40


def test_stage7_shows_the_stale_slope_with_numbers_from_both_engines(kata):
    solve(kata, 6)
    solve(kata, 7)
    lines = feel.feel(stage(7), kata)
    assert len(lines) == 4, lines
    step, retained, refused = lines[1:]
    w1 = 0 - LR * slope_w(0, 0)
    assert f"moves w from 0 to {w1:g}, where the slope is {slope_w(w1, 0):.4g} by a fresh forward pass" in step
    assert f"({slope_w(0, 0):.4g} was the slope at w = 0)" in step
    assert f"on your stage-6 engine gives w.grad = {second_pass_without_reset():.4g}, silently: neither slope." in step
    # where that number comes from (second_pass_without_reset's derivation), said since the engine showed it
    assert "interior nodes still held their grads from the first pass, and its rules added the second" in step
    assert numbers(retained) == [pytest.approx(slope_w(0, 0))]  # retain_graph=True: the old slope
    assert "the slope at the old w, because the closures hold values from a forward pass" in retained
    assert refused.startswith('Without it, your engine refuses ("backward() was called through a graph a second')


def test_stage7_in_japanese_says_the_same_numbers(kata, monkeypatch):
    solve(kata, 6)
    solve(kata, 7)
    in_language(monkeypatch, "ja")
    step, retained, refused = feel.feel(stage(7), kata)[1:]
    assert "w は 0 から 0.5 に動きます。そこでの傾きは、順伝播をやり直すと -3.5 です（-5 は w = 0 での傾き）" in step
    assert "ステージ 6 のエンジンは黙って w.grad = -35 を返します。どちらの傾きでもありません" in step
    assert "途中のノードが 1 回目の勾配をまだ持っていて" in step
    assert "それでも 2 回目は -5 になります。これは古い w での傾きです" in retained
    assert refused.startswith("retain_graph なしなら、あなたのエンジンは断ります（`backward() was called")
    for line in (step, retained, refused):
        assert JAPANESE.search(line), line


def test_a_stage7_engine_that_does_not_refuse_is_told_so(kata):
    solve(kata, 6)
    solve(kata, 7, lambda text: text.replace("if node._prev and not retain_graph:", "if False:"))
    lines = feel.feel(stage(7), kata)
    assert lines[-1] == ("Without it, your engine gives w.grad = -5 and does not refuse: a slope from a spent "
                         "forward pass would go into the next step silently.")
    assert not any("refuses" in line for line in lines)


def test_an_engine_that_keeps_interior_grads_is_not_said_to_give_the_old_slope(kata):
    """Without the interior reset, retain_graph's second pass is not the old slope: the line
    only states the number (computed by hand as for the stage-6 engine, with stage 7's seed)."""
    solve(kata, 6)
    solve(kata, 7, lambda text: text.replace("node.grad = 0.0  # interior grads", "pass  # interior grads"))
    retained = feel.feel(stage(7), kata)[2]
    kept = second_pass_without_reset(seed_adds=True)
    assert retained == (f"With retain_graph=True the second pass of the old graph gives w.grad = {kept:.4g} "
                        "on your engine (the slope at the new w is -3.5).")


def test_an_earlier_stage_that_is_missing_costs_one_clause(kata):
    solve(kata, 7)
    (kata / stage(6).source()).unlink()
    lines = feel.feel(stage(7), kata)
    assert len(lines) == 4
    assert lines[1].endswith("(Your stage-6 engine could not run the second backward(): ModuleNotFoundError.)")
    assert "the slope at the old w" in lines[2] and "refuses" in lines[3]


def test_an_engine_whose_grads_are_not_numbers_gets_a_failure_line_not_a_claim(kata):
    solve(kata, 6)
    solve(kata, 7, lambda text: text.replace("            p.grad = 0.0", "            p.grad = None", 1))
    lines = feel.feel(stage(7), kata)
    assert len(lines) == 2, lines
    assert all(line.startswith("(the numbers from your engine could not be computed: TypeError") for line in lines)


def test_a_hanging_engine_costs_one_line(kata, monkeypatch):
    solve(kata, 7, lambda text: text.replace("        order = self.topological_order()\n",
                                             "        order = self.topological_order()\n        while True:\n"
                                             "            pass\n", 1))
    monkeypatch.setattr(feel, "TIME_LIMIT", 3.0)
    assert feel.feel(stage(7), kata) == ["(the numbers from your engine took over 3 s: skipped)"]


def test_a_numbers_line_never_formats_what_is_not_a_number():
    assert feel_engine._g(-3.5) == "-3.5"
    for odd in (None, "5", True, object()):
        with pytest.raises(TypeError):
            feel_engine._g(odd)


# --- the article's += in stages 2-5 ----------------------------------------------

GENERAL = ("This stage's rules assign (=) on purpose, as the stubs of stages 2-5 do, and the article's += is right "
           "too: the two give the same gradients until a node is used twice, and stage 6 shows why the article adds.")
YOURS = ("Your rules add (+=), as the article writes, and that stays right: = and += give the same gradients "
         "until a node is used twice (the stubs of stages 2-5 assign on purpose), and stage 6 shows why. "
         "Your code is already ready for it.")


def adding(text):
    """Every rule written with +=: `self.grad = ...` inside a closure becomes `self.grad += ...`."""
    return re.sub(r"^(\s{12}\w+\.grad) = ", r"\1 += ", text, flags=re.M)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_stages_2_to_5_say_the_articles_plus_equals_is_right(kata, n):
    solve(kata, n)
    assert feel.feel(stage(n), kata) == [GENERAL]


@pytest.mark.parametrize("n", [2, 4])
def test_a_learner_whose_own_rules_add_is_told_they_are_ready(kata, n):
    """Stage 4's module also holds stage 2's rules as given (=): only the learner's own count."""
    s = stage(n)
    own = feel_source._own_methods(s, kata)
    assert own and feel_source.grad_writes(reference(n), own)[0] == 0  # the reference's own rules assign
    solve(kata, n, adding)
    assert feel.feel(s, kata) == [YOURS]


@pytest.mark.parametrize("n", [3, 5])
def test_in_a_stage_without_rules_of_its_own_the_given_rules_count_as_they_are_now(kata, n):
    """A reader who carries their += forward into the given rules is told so too."""
    solve(kata, n)
    assert feel.feel(stage(n), kata) == [GENERAL]
    solve(kata, n, adding)
    assert feel.feel(stage(n), kata) == [YOURS]


def test_one_own_rule_that_assigns_keeps_the_general_line(kata):
    def all_but_tanh(text):
        text = adding(text)
        return text.replace("self.grad += (1 - t * t) * out.grad", "self.grad = (1 - t * t) * out.grad")
    solve(kata, 4, all_but_tanh)
    assert feel.feel(stage(4), kata) == [GENERAL]


def test_without_a_stub_to_compare_every_rule_counts(kata):
    solve(kata, 4, adding)  # adding() changes stage 2's given rules too
    for s in STAGES:
        (kata / s.source("solutions")).unlink()
    assert feel_source._own_methods(stage(4), kata) is None
    assert feel.feel(stage(4), kata) == [YOURS]
    text = (kata / stage(4).source()).read_text(encoding="utf-8")
    (kata / stage(4).source()).write_text(text.replace("self.grad += out.grad", "self.grad = out.grad", 1))
    assert feel.feel(stage(4), kata) == [GENERAL]


def test_the_plus_equals_lines_in_japanese(kata, monkeypatch):
    in_language(monkeypatch, "ja")
    solve(kata, 2)
    assert feel.feel(stage(2), kata) == [
        "ステージ 2〜5 のスタブと同じく、このステージの勾配の配り方はわざと代入（=）で書いてあります。"
        "記事の += も正解です。ノードが 2 回使われるまでは、"
        "どちらでも同じ勾配になります。記事がなぜ足し込むのかは、ステージ 6 で分かります。"]
    solve(kata, 2, adding)
    (line,) = feel.feel(stage(2), kata)
    assert line.startswith("あなたの勾配の配り方は記事と同じ足し込み（+=）で") and "もう備えができています" in line


def test_kata_check_shows_the_line_under_a_passing_stage(kata, capsys):
    solve(kata, 2, adding)
    code, out, _ = run_kata(capsys, "check", "2")
    lines = out.splitlines()
    assert code == 0 and f"  {YOURS}" in lines
    taught = next(n for n, line in enumerate(lines) if stage(2).lesson in line)
    assert lines.index(f"  {YOURS}") == taught + 1  # right under what the stage taught


@pytest.mark.parametrize("argv", [["diff", "2", "--reveal"], ["diff", "3", "--previous", "--reveal"]])
def test_kata_diff_of_stages_2_to_5_ends_with_the_line(kata, capsys, argv):
    code, out, _ = run_kata(capsys, *argv)
    lines = out.splitlines()
    assert code == 0 and lines[-1] == GENERAL and lines.count(GENERAL) == 1
    assert lines[0].startswith("--- ") and lines[-2].startswith((" ", "+", "-"))  # the diff, then the line


def test_kata_diff_tells_a_learner_whose_rules_add(kata, capsys, monkeypatch):
    solve(kata, 2, adding)
    code, out, _ = run_kata(capsys, "diff", "2", "--reveal")
    lines = out.splitlines()
    assert code == 0 and lines[-1] == YOURS
    assert any(line.startswith("-") and ".grad += " in line for line in lines)  # what the reference changes
    in_language(monkeypatch, "ja")
    _, out, _ = run_kata(capsys, "diff", "2", "--reveal")
    assert out.splitlines()[-1].startswith("あなたの勾配の配り方は記事と同じ足し込み（+=）で")


def test_kata_diff_of_a_stage_that_adds_has_no_such_line(kata, capsys):
    _, out, _ = run_kata(capsys, "diff", "6", "--reveal")
    assert "article's +=" not in out


# --- the manifest says what each stage shows --------------------------------------

def test_every_demonstration_the_manifest_names_exists_and_every_one_is_named():
    named = [name for s in STAGES for name in s.feel]
    assert set(named) <= set(feel.DEMONSTRATIONS), set(named) - set(feel.DEMONSTRATIONS)
    assert set(feel.DEMONSTRATIONS) <= set(named), "a demonstration no stage shows"


def test_feel_shows_what_the_manifest_says_and_names_no_stage(kata):
    solve(kata, 2)
    moved = dataclasses.replace(stage(1), feel=("plus_equals",))  # stage 1 has no closures: the general line
    assert feel.feel(moved, kata) == [GENERAL]
    assert feel.feel(dataclasses.replace(stage(2), feel=()), kata) == []
    for module in (feel, feel_engine, feel_source):
        source = Path(module.__file__).read_text(encoding="utf-8")
        assert not re.search(r"stage0\d|stage\(\d\)|number (?:in|==|not in)", source), module.__name__


def test_the_fit_takes_the_reference_train_steps():
    """feel's fit is core.training.step's, and that step is the learner's contract,
    train() of the last stage: the same losses, step for step."""
    engine = importlib.import_module(f"solutions.{STAGES[-1].module}")
    ours = feel_engine.line_fit(engine, True, steps=30)
    theirs = engine.train(feel_engine.line(engine), list(feel_engine.XS), list(feel_engine.YS), 30, feel_engine.LR)
    assert ours == pytest.approx(theirs, rel=1e-12) and ours[-1] < ours[0] / 100


def test_the_page_shows_the_same_lines_in_its_own_process(kata, monkeypatch):
    """The browser page's feel (site/inpage.py: no child process, a signal-free time
    limit) reads the same manifest entries and gives the same lines."""
    import sys

    from autograd_kata.site import inpage
    solve(kata, 6)
    solve(kata, 7)
    solve(kata, 2, adding)
    expected = {n: feel.feel(stage(n), kata) for n in (2, 7)}
    assert expected[2] == [YOURS] and len(expected[7]) == 4 and "the slope at the old w" in expected[7][2]
    for name in [name for name in sys.modules if name == "exercises" or name.startswith("exercises.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(kata))
    for n in (2, 7):
        assert inpage.feel(stage(n), kata) == expected[n]
    assert inpage.feel(stage(1), kata) == []
    assert not any(name.startswith("exercises.") for name in sys.modules)  # forgotten: the next check re-imports


def test_an_engine_whose_slopes_disagree_with_its_own_values_gets_no_claim(kata):
    """A wrong pow rule (twice the slope): "the slope there is" would be false, so
    the demonstration says what disagrees, measured on the engine's forward values."""
    solve(kata, 6)
    solve(kata, 7, lambda text: text.replace("self.grad += exponent * self.data",
                                             "self.grad += 2 * exponent * self.data"))
    lines = feel.feel(stage(7), kata)
    w1 = 0 - LR * 2 * slope_w(0, 0)  # the step it took, on twice the slope
    assert lines[1:] == [f"(No second backward() after a step: at w = {w1:g} your engine's backward() gives the "
                         f"slope {2 * slope_w(w1, 0):.4g}, but its own loss values change at a rate of "
                         f"{slope_w(w1, 0):.4g} there.)"]


def test_the_learners_prints_are_not_shown_as_lines(kata):
    solve(kata, 6)
    solve(kata, 7, lambda text: text.replace("        order = self.topological_order()\n",
                                             "        order = self.topological_order()\n        print('debug')\n", 1))
    lines = feel.feel(stage(7), kata)
    assert len(lines) == 4 and not any("debug" in line for line in lines)


def test_a_source_it_cannot_read_costs_the_line_not_the_check(kata, monkeypatch):
    (kata / stage(2).source()).write_bytes(b"\xff\xfe not utf-8")
    assert feel.feel(stage(2), kata) == [GENERAL]  # unreadable as the learner's: nothing claimed about it
    (kata / stage(2).source()).unlink()
    assert feel.feel(stage(2), kata) == [GENERAL]
    import autograd_kata.core.manifest as manifest
    monkeypatch.setattr(manifest, "STAGES", tuple(s for s in STAGES if "accumulate" not in s.feel))
    assert feel.feel(stage(2), kata) == []  # no stage to point to: no line, and no crash
