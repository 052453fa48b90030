"""Verdicts without exception (issue 21): each case a learner really met, before and after.

Every case is a reference module with one change, put in a scratch kata as the
learner's ``exercises/`` module, then checked the two ways a learner checks it:

* ``kata check N`` (in English and in Japanese): the stage fails, and the one
  failure it shows in full (the first, the cause) says the catalogue message
  that names what happened, and none of the messages that would be a guess;
* plain ``pytest tests/test_stageNN_*.py``: exit status 1 (tests failed, never
  3, pytest's own internal error), with the same message. A case whose module is a
  catalogued mistake (``twin``) is run so once, by test_mistakes.py, which checks this there.

Before these fixes: the quadratic order passed ``kata check 5`` ("all 9 tests
pass") while plain pytest ended in an INTERNALERROR; the others showed a crash
first, or a guess the numbers did not prove.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograd_kata.core.i18n import raw
from autograd_kata.core.manifest import STAGES, stage
from kit import clone, reference


@dataclass(frozen=True)
class Case:
    id: str
    stage: int
    old: str | tuple       # exact text of the reference module, found exactly once (or several such)
    new: str | tuple
    says: str              # catalogue id: the first failure shown must say it
    never: tuple = ()      # catalogue ids: no failure shown may say them (a guess)
    twin: str = ""         # the catalogued mistake that is this very module (test_mistakes runs its plain pytest)


CASES = (
    Case("visited-kept-in-a-list", 5, ("order, visited = [], set()", "visited.add(node)"),
         ("order, visited = [], []", "visited.append(node)"), "s5.quadratic"),
    Case("order-skips-leaves", 5,
         "                    if child not in visited:  # one visited before is already in order\n",
         "                    if child not in visited and child._prev:\n",
         "s5.diamond_too_few", ("s5.once", "s5.reverse"), twin="order-skips-leaves"),
    Case("root-rule-skipped", 5, "for node in reversed(self.topological_order()):",
         "for node in reversed(self.topological_order()[:-1]):", "s5.root_rule_skipped", ("s5.seed",)),
    Case("fresh-graph-refused", 7, "            if node._backward is _spent:\n",
         "            if node._prev and node._backward is not _spent:\n", "s7.fresh_refused",
         twin="refuses-a-fresh-graph"),
    Case("step-goes-uphill", 8, "p.data -= lr * p.grad", "p.data += lr * p.grad", "s8.uphill",
         twin="train-climbs-the-gradient"),
    Case("every-layer-takes-nin", 8, "self.layers = [Layer(sizes[i], sizes[i + 1],",
         "self.layers = [Layer(nin, sizes[i + 1],", "s8.repr_inputs", ("s8.one_wide",),
         twin="every-layer-takes-nin"),
    Case("layer-unwraps-one", 8, "return [n(x) for n in self.neurons]  # always a list, even of one",
         "out = [n(x) for n in self.neurons]\n        return out[0] if len(out) == 1 else out", "s8.one_wide_layer",
         twin="one-output-unwrapped-per-layer"),
    Case("mlp-never-unwraps", 8, "return x[0] if len(x) == 1 else x", "return x", "s8.one_output",
         twin="mlp-never-unwraps"),
    Case("train-keeps-values", 8, "losses.append(loss.data)", "losses.append(loss)", "s8.loss_floats",
         twin="train-keeps-the-loss-value"),
    Case("rsub-loops", 3, "return other + (-self)", "return other - self", "crash.reflected_order_matters",
         ("crash.reflected_order_free",)),
    Case("prev-kept-as-a-list", 1, "self._prev = set(_children)", "self._prev = list(_children)",
         "s1.prev.type", ("s1.prev.empty",)),
    # issue 30: a mistake is named only with its evidence, and the first failure shown is the cause
    Case("radd-loops", 3, "return self + other\n", "return other + self\n", "crash.reflected_order_free",
         ("s3.not_implemented",)),
    Case("mul-rule-read-off-the-output", 2, "self.grad = other.data * out.grad",
         "self.grad = out.data / self.data * out.grad", "s2.mul.zero_divides"),
    Case("zero-grad-after-backward", 8, "        model.zero_grad()\n        loss.backward()\n",
         "        loss.backward()\n        model.zero_grad()\n", "s8.zeroed_before_update", ("s8.not_a_step",)),
    Case("neuron-without-bias", 8, "zip(self.w, x, strict=True)), self.b)", "zip(self.w, x, strict=True)), Value(0.0))",
         "s8.neuron_is", ("s8.last_linear_rule", "s8.hidden_rule")),
    Case("neuron-bias-per-input", 8, "sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)",
         "sum((wi * xi + self.b for wi, xi in zip(self.w, x, strict=True)), Value(0.0))",
         "s8.neuron_is", ("s8.last_linear_rule", "s8.hidden_rule")),
    Case("refusal-is-a-value-error", 7, "    raise RuntimeError(_RELEASED)", "    raise ValueError(_RELEASED)",
         "s7.refuse", ("crash.prefix",)),
    Case("released-as-none", 7, "node._backward = _spent  # used once", "node._backward = None  # used once",
         "crash.released_as_none", ("crash.none_called",)),
)


def fixed_part(msgid: str, lang: str) -> str:
    """The longest stretch of the message without a field: what any rendering of it contains."""
    return max(re.split(r"\{[^}]*\}", raw(msgid, lang)), key=len).strip()


def shown_first(output: str) -> str:
    """The one failure ``kata check`` shows in full: from its first ✗ line to the folded rest."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(("✗", "x "))), None)
    if start is None:
        return ""
    block = [lines[start]]
    for line in lines[start + 1:]:
        if not line.startswith("    "):
            break
        block.append(line)
    return "\n".join(block)


def edited(verdict: Case) -> str:
    """The reference module of the case's stage (no markers) with the case's one change."""
    source = reference(verdict.stage)
    olds, news = (verdict.old, verdict.new) if isinstance(verdict.old, tuple) else ((verdict.old,), (verdict.new,))
    for old, new in zip(olds, news, strict=True):
        assert source.count(old) == 1, f"{verdict.id}: {old!r} is not found exactly once in stage {verdict.stage}"
        source = source.replace(old, new)
    return source


def scratch(verdict: Case, where: Path) -> Path:
    clone(where)
    for s in STAGES:  # every stage written as the reference, the case's with its one change
        (where / s.source("exercises")).write_text(reference(s.number), encoding="utf-8")
    (where / stage(verdict.stage).source("exercises")).write_text(edited(verdict), encoding="utf-8")
    return where


def runs(verdict: Case, where: Path) -> dict:
    env = {"PYTHONDONTWRITEBYTECODE": "1", "KATA_IMPL": "", "NO_COLOR": "1"}
    env = {**os.environ, **env}
    got = {}
    for lang in ("en", "ja"):
        got[lang] = subprocess.run([sys.executable, "-m", "autograd_kata", "check", str(verdict.stage),
                                    "--lang", lang],
                                   cwd=where, env=env, capture_output=True, text=True, encoding="utf-8",
                                   timeout=120, check=False)
    if verdict.twin:  # its plain pytest is test_mistakes' run of the twin (test_plain_pytest_of_a_verdict_twin...)
        return got
    got["pytest"] = subprocess.run([sys.executable, "-m", "pytest", stage(verdict.stage).test_file, "-q",
                                    "-p", "no:cacheprovider", "--no-header"], cwd=where,
                                   env={**env, "KATA_LANG": "en"}, capture_output=True, text=True,
                                   encoding="utf-8", timeout=120, check=False)
    return got


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    places = {verdict.id: scratch(verdict, tmp_path_factory.mktemp(verdict.id)) for verdict in CASES}
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(places, pool.map(runs, CASES, places.values()), strict=True))


@pytest.mark.timeout(900)
@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("verdict", CASES, ids=[c.id for c in CASES])
def test_kata_check_shows_the_cause_first(verdict, lang, outcomes):
    done = outcomes[verdict.id][lang]
    output = done.stdout
    assert done.returncode == 1, f"{verdict.id} ({lang}): kata check {verdict.stage} exited {done.returncode}, " \
                                 f"expected 1 (the stage fails)\n{output}\n{done.stderr[-1500:]}"
    first = shown_first(output)
    want = fixed_part(verdict.says, lang)
    assert want in first, \
        f"{verdict.id} ({lang}): the first failure shown does not say {verdict.says} ({want!r}):\n{output}"
    for guess in verdict.never:
        text = fixed_part(guess, lang)
        assert text not in output, f"{verdict.id} ({lang}): kata check says {guess} ({text!r}), a guess:\n{output}"


def plain_pytest_fails_with_the_same_message(verdict: Case, done) -> None:
    """Plain pytest of the case's stage: exit status 1, no INTERNALERROR, the case's message said."""
    output = done.stdout + done.stderr
    assert done.returncode == 1, f"{verdict.id}: plain pytest exited {done.returncode}, expected 1 " \
                                 f"(a failure; 3 is pytest's own internal error)\n{output[-3000:]}"
    assert "INTERNALERROR" not in output, f"{verdict.id}: pytest broke\n{output[-3000:]}"
    assert fixed_part(verdict.says, "en") in output, \
        f"{verdict.id}: plain pytest never says {verdict.says}\n{output[-3000:]}"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("verdict", [c for c in CASES if not c.twin], ids=[c.id for c in CASES if not c.twin])
def test_plain_pytest_fails_with_the_same_message(verdict, outcomes):
    """(A case whose module is a catalogued mistake, its ``twin``, is checked on test_mistakes' run
    of that mistake, the same plain pytest: test_plain_pytest_of_a_verdict_twin_fails_with_its_message.)"""
    plain_pytest_fails_with_the_same_message(verdict, outcomes[verdict.id]["pytest"])


@pytest.mark.parametrize("hook", ["pytest_runtest_logreport", "pytest_runtest_makereport"])
def test_a_run_that_pytest_itself_breaks_is_no_verdict(hook, tmp_path):
    """pytest stopping with an internal error (exit 3) after some tests passed is a failure that
    says so, never a pass: every later reader (kata check, status, watch) reads this result."""
    from autograd_kata.core import runner

    where = scratch(Case("reference", 1, "self.grad = 0.0", "self.grad = 0.0", "s1.prev.type"), tmp_path)
    (where / "kata_breaker.py").write_text(
        f"def {hook}(item=None, call=None, report=None):\n"
        "    if getattr(report or call, 'when', '') == 'call':\n"
        "        raise RuntimeError('the plugin broke pytest')\n", encoding="utf-8")
    got = runner.run("exercises", [stage(1)], root=where, extra=("-p", "kata_breaker"))[1]
    assert not got.ok and got.problem, f"a broken run was taken for a verdict: {got}"
    assert fixed_part("runner.broken", "en") in got.problem, got.problem
    assert "INTERNALERROR" in got.problem, f"pytest's last words are missing: {got.problem}"


def test_a_grade_report_speaks_the_language_it_is_asked_for(tmp_path):
    """``kata grade --lang ja``: the judge speaks English, yet the report's test messages and
    reasons are said in Japanese from the messages' data (their catalogue ids and fields)."""
    import json

    from kit import ROOT

    verdict = next(c for c in CASES if c.id == "order-skips-leaves")
    submission = scratch(verdict, tmp_path / "student")
    done = subprocess.run([sys.executable, "-m", "autograd_kata", "grade", "--submission", str(submission),
                           "--stage", "5", "--lang", "ja", "--format", "gradescope"], cwd=ROOT,
                          capture_output=True, text=True, encoding="utf-8", timeout=300, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    output = json.loads(done.stdout)["tests"][0]["output"]
    for msgid in ("s5.diamond_too_few", "report.not_passed", "report.graded_file"):
        assert fixed_part(msgid, "ja") in output, f"{msgid} is not said in Japanese:\n{output}"
    for english in ("tests did not pass", "a node is left out", "Graded "):
        assert english not in output, f"English left in a Japanese report ({english!r}):\n{output}"
