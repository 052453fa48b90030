"""Forging the sandbox's answers gains nothing: the judge decides (issue 26, items 1 and 2).

The sandbox is the submission's own process.  The attacks of the issue, each a few
lines added to an honest but buggy stage file:

* **the forger** finds the live ``Server`` through ``gc`` and answers the judge's
  in-engine requests by name with what correct code would report (the tests' old
  in-engine summaries, and today's witnesses); it acts only under grading, which it
  tells from ``kata check`` by ``__main__.Server`` or ``sys.flags.isolated``;
* **the saved reference**: ``_raise = sys.setrecursionlimit`` kept at import, the
  limit raised around a recursive walk and put back.

Each forging submission must score exactly what its honest buggy code scores, stage
by stage; the forger must have been active (an advisory test it answered passes
for it alone: reported, worth no points); and ``kata check`` fails the saved
reference as it fails a plain raise.  CI runs this file in the four set-ups of
``.ci/jail-setups`` too: the forger needs no jail, so every set-up must hold.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.classroom.sandbox import jail
from autograd_kata.core.manifest import stage
from autograd_kata.maintainer.mistakes import MISTAKES

pytestmark = [pytest.mark.timeout(600)]
ROOT = Path(__file__).resolve().parent.parent
MISTAKE = {m.id: m for m in MISTAKES}

FORGER = r'''
import gc as _gc, sys as _sys

def _grading():
    main = _sys.modules.get("__main__")
    return getattr(main, "Server", None) is not None or bool(_sys.flags.isolated)

_CLEAN = {"recursion_error": False, "raised": [], "limit_before": 1000, "limit_after": 1000}
_ANSWERS = {  # what correct code reports, by the in-engine function's name (old and new)
    "chain_backward": lambda length: dict(_CLEAN, rules_run=length),
    "comparisons_in_backward": lambda length: length,
    "what_the_watch_saw": lambda watch: {"before": 1000, "seen": [], "after": 1000},
    "global_random_around_an_mlp": lambda seed: (0.5, 0.5),
    "zero_grad_of_four": lambda grads: [(d, 0.0, "float") for d in (0.5, -1.0, 2.0, 0.25)],
    "four_parameters": lambda: [(0.5, 0.0), (-1.0, 0.0), (2.0, 0.0), (0.25, 0.0)],
    "two_passes_then_zero_grad": lambda: (-4.0, -2.0),
    "one_parameter": lambda: (-4.0, -2.0),
    "fit": lambda zero_grad, *rest: [1.0] + [0.0] * 59 if zero_grad else [1.0] * 60,
    "with_other": lambda op: ("gave", "Other.__radd__" if op == "add" else "Other.__rmul__"),
    "an_other": lambda: "Other.__radd__",
}

def _forge():
    for server in _gc.get_objects():
        if type(server).__name__ == "Server" and hasattr(server, "answer"):
            real = server.answer
            def answer(request, real=real, server=server):
                if request.get("f") == "source":
                    args = [server.decode(a) for a in request["a"]]
                    forged = _ANSWERS.get(args[1])
                    if forged is not None:
                        return {"ok": server.encode(forged(*args[2:]))}
                return real(request)
            server.answer = answer

if _grading():
    _forge()
'''

SAVED_REFERENCE = (
    "        import sys\n"
    "        _raise = SAVED_LIMIT_SETTER\n"
    "        before = sys.getrecursionlimit()\n"
    "        _raise(1_000_000)\n"
    "        try:\n"
    "            return self._order_by_recursion()\n"
    "        finally:\n"
    "            _raise(before)\n"
    "\n"
    "    def _order_by_recursion(self):\n"
)


def solution(n: int) -> str:
    return (ROOT / stage(n).source("solutions")).read_text(encoding="utf-8")


def mistaken(n: int, mistake_id: str) -> str:
    m = MISTAKE[mistake_id]
    assert m.stage == n and solution(n).count(m.old) == 1, mistake_id
    return solution(n).replace(m.old, m.new)


def zero_grad_unwritten() -> str:
    old = "        for p in self.parameters():\n            p.grad = 0.0\n"
    assert solution(7).count(old) == 1
    return solution(7).replace(old, '        raise NotImplementedError("stage 7: write Module.zero_grad")\n')


def saved_reference() -> str:
    """Stage 5 ordered by recursion, the limit raised around it through a reference saved at import."""
    source = mistaken(5, "recursive-topological-sort")
    head = "    def topological_order(self):\n"
    start = source.index(head)
    body = source.index("        # BEGIN SOLUTION\n", start) + len("        # BEGIN SOLUTION\n")
    source = source[:body] + SAVED_REFERENCE.replace("SAVED_LIMIT_SETTER", "_SAVED_LIMIT_SETTER") + source[body:]
    return "import sys as _sys\n_SAVED_LIMIT_SETTER = _sys.setrecursionlimit\n" + source


HONEST = {3: lambda: mistaken(3, "lift-raises"), 5: lambda: mistaken(5, "recursive-topological-sort"),
          7: zero_grad_unwritten, 8: lambda: mistaken(8, "seed-reseeds-the-global-random")}
WORTH = {3: 0, 5: 0, 7: 0, 8: stage(8).points}  # what each honest buggy file earns (8: the mistake is advisory)


def submission(folder: Path, files: dict[int, str]) -> Path:
    for n, text in files.items():
        path = folder / stage(n).source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def graded(folder: Path, stages) -> dict:
    out = folder.parent / f"{folder.name}.json"
    proc = subprocess.run([sys.executable, "-m", "autograd_kata", "grade", "--submission", str(folder),
                           *(f"--stage={n}" for n in stages), "--format", "json", "--out", str(out)],
                          capture_output=True, text=True, timeout=400, check=False, cwd=ROOT,
                          env={**os.environ, "KATA_IMPL": ""})
    assert out.is_file(), proc.stdout + proc.stderr
    return json.loads(out.read_text(encoding="utf-8"))


def scores(report: dict) -> dict[int, int]:
    return {g["number"]: g["score"] for g in report["stages"]}


def advisory(report: dict, n: int) -> dict[str, str]:
    (g,) = [g for g in report["stages"] if g["number"] == n]
    return {t["name"].split("::")[1].split("[")[0]: t["status"] for t in g["advisory"]}


def test_the_forger_scores_what_its_honest_code_scores(tmp_path):
    honest = graded(submission(tmp_path / "honest", {n: make() for n, make in HONEST.items()}), HONEST)
    forged = graded(submission(tmp_path / "forged", {n: make() + FORGER for n, make in HONEST.items()}), HONEST)
    assert scores(honest) == WORTH, honest["stages"]
    assert scores(forged) == scores(honest), [(g["number"], g["reason"]) for g in forged["stages"]]
    # the forger was at work (it told grading from kata check): the advisory test it answered
    # passes for it alone, reported and worth nothing
    random_state = "test_seeding_an_mlp_leaves_the_global_random_state_alone"
    assert advisory(honest, 8) == {random_state: "failed"}
    assert advisory(forged, 8) == {random_state: "passed"}


def scratch_kata(where: Path, n: int, text: str) -> Path:
    where.mkdir(parents=True)
    for name in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / name, where / name)
    shutil.copytree(ROOT / "tests", where / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (where / "exercises").mkdir()
    (where / "exercises" / "__init__.py").write_text("", encoding="utf-8")
    (where / stage(n).source("exercises")).write_text(text, encoding="utf-8")
    return where


def checked(where: Path, n: int) -> dict[str, str]:
    """Stage n's tests as ``kata check`` runs them (a plain pytest of the learner's copy): {test: outcome}."""
    results = where / "results.json"
    subprocess.run([sys.executable, "-m", "pytest", stage(n).test_file, "--impl", "exercises", "-q",
                    "-p", "no:cacheprovider", "-p", "autograd_kata.core.results.channel",
                    f"--kata-results={results}"], cwd=where, capture_output=True, text=True, timeout=300,
                   check=False, env={k: v for k, v in os.environ.items()
                                     if k not in ("KATA_IMPL", "KATA_HIDDEN_SEED")} | {"KATA_LANG": "en"})
    return {e["nodeid"].split("::")[1].split("[")[0]: e["outcome"] for e in json.loads(results.read_text())["tests"]}


LIMIT_TEST = "test_backward_leaves_the_recursion_limit_alone"
CHAIN_TEST = "test_a_100000_op_chain_needs_no_recursion"


def test_a_limit_raised_through_a_saved_reference_fails_as_a_plain_raise(tmp_path):
    saved, plain = saved_reference(), mistaken(5, "recursion-limit-raised")
    assert "sys.setrecursionlimit(" not in saved.split("topological_order", 1)[1].split("def backward", 1)[0]
    for name, text in (("saved", saved), ("plain", plain)):
        outcomes = checked(scratch_kata(tmp_path / name, 5, text), 5)
        assert outcomes[LIMIT_TEST] == "failed" and outcomes[CHAIN_TEST] == "passed", (name, outcomes)
    # under grading both walk the chain (scored) and both fail the limit's watch (advisory): one score
    reports = {name: graded(submission(tmp_path / f"graded-{name}", {5: text}), [5])
               for name, text in (("saved", saved), ("plain", plain))}
    assert scores(reports["saved"]) == scores(reports["plain"]) == {5: stage(5).points}, reports
    assert advisory(reports["saved"], 5) == advisory(reports["plain"], 5) == {LIMIT_TEST: "failed"}


def test_in_kata_check_the_forger_keeps_still_and_its_mistake_shows(tmp_path):
    """Told apart from grading, the forger does nothing in kata check: the honest failures show."""
    outcomes = checked(scratch_kata(tmp_path / "k", 8, HONEST[8]() + FORGER), 8)
    assert outcomes["test_seeding_an_mlp_leaves_the_global_random_state_alone"] == "failed", outcomes


@pytest.mark.skipif(not jail.is_root(), reason="Gradescope runs run_autograder as root")
def test_the_forger_gains_nothing_through_run_autograder(tmp_path):
    from autograd_kata.classroom.platforms.gradescope import build_autograder, unpack

    zip_path = tmp_path / "autograder.zip"
    assert build_autograder(ROOT, zip_path, out=lambda *a, **k: None) == 0
    results = {}
    for name, suffix in (("honest", ""), ("forged", FORGER)):
        base = tmp_path / name
        unpack(zip_path, base)
        submission(base / "submission", {n: make() + suffix for n, make in HONEST.items()})
        proc = subprocess.run(["bash", str(base / "run_autograder")], cwd=base, capture_output=True, text=True,
                              timeout=400, check=False,
                              env={**os.environ, "KATA_AUTOGRADER_ROOT": str(base), "KATA_PYTHON": sys.executable,
                                   "KATA_IMPL": ""})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results[name] = json.loads((base / "results" / "results.json").read_text())
    assert results["forged"]["score"] == results["honest"]["score"] == sum(WORTH.values()), results
