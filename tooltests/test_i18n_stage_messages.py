"""The stage tests' failure messages speak one language: Japanese with KATA_LANG=ja, English with en.

Each case is a learner's file: a stage's untouched stub (``exercises/``), or the
reference with a classic mistake made in it (``autograd_kata/maintainer/mistakes.py``).
Its stage runs as the learner runs it, a plain ``pytest tests/test_stageNN_*.py`` in a
scratch copy of the kata, with ``KATA_LANG`` set; the results plugin records every
failing test's message (the text the terminal shows: the run checks that too).

* ja: every line of every failure, once code is taken out (code spans, identifiers,
  calls and reprs, numbers, paths, kata commands, quoted values and quoted program
  output such as a Python error's own text), has no English word left and says
  something in Japanese.
* en: no Japanese anywhere. (A mistake's English run is test_mistakes.py's run of it, for
  every catalogued mistake: test_every_failure_line_of_the_mistake_is_in_english there.)

The stubs' own NotImplementedError text ("stage 5: write Value.backward (kata
hint 5)") is retold in the chosen language by the root conftest, and a crash in the
learner's code is explained by core/explain.py in that language too, Python's own
error text quoted: every case below is checked, none is excused.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from japanese import prose_trouble

from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.maintainer.mistakes import MISTAKES

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120
LANG_VARS = ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")


def test_the_detector_finds_english_prose_and_lets_code_through():
    ja = ("a.grad が -3 です。期待値は 6。d(a*a)/da = a + a = 2a。`mul` の勾配の配り方が、足す（+=）代わりに"
          "代入（=）しています（ヒント: kata hint 6）")
    assert prose_trouble(ja, "ja") == []
    assert prose_trouble("topological_order() が [Value(data=1.5, grad=0.0), Value(data=-2.0, grad=0.0)] を"
                         "返しました。`RuntimeError` のメッセージは 'graph released' です", "ja") == []
    assert prose_trouble("s8: 「'Value' object is not iterable」 で落ちました", "ja") == []
    assert prose_trouble("a.grad is -3.0, expected 6.0: the mul rule assigns (=) -> kata hint 6", "ja")
    assert prose_trouble("a.grad が -3 です: each node once", "ja")
    assert prose_trouble("not written yet: stage 5: write Value.backward (kata hint 5)", "ja")
    assert prose_trouble("a.grad is -3.0 -> kata hint 6", "en") == []
    assert prose_trouble("a.grad が -3 です", "en")


# --- the cases ----------------------------------------------------------------------

MISTAKEN = ("data-kept-as-given", "add-forgets-upstream", "sub-forgets-to-negate", "tanh-one-minus-t",
            "no-reverse", "no-visited-set", "root-not-seeded", "recursive-topological-sort", "outputs-before-inputs",
            "mul-rule-assigns", "backward-zeroes-every-grad",
            "micrograd-one-to-three", "second-backward-accepted", "zero-grad-sets-int", "refuses-too-late",
            "last-layer-relu", "one-output-unwrapped-per-layer", "train-no-zero-grad", "seed-ignored",
            "train-climbs-the-gradient")
# mistakes whose failures are crashes in the learner's code, reported by core/explain.py
BY_ID = {m.id: m for m in MISTAKES}
CASES = [(f"stub{s.number}", s.number, None) for s in STAGES] + [(i, BY_ID[i].stage, BY_ID[i]) for i in MISTAKEN]


def source_of(number, mistake) -> str:
    s = stage(number)
    if mistake is None:
        return (ROOT / s.source("exercises")).read_text(encoding="utf-8")
    source = (ROOT / s.source("solutions")).read_text(encoding="utf-8")
    assert source.count(mistake.old) == 1, f"{mistake.id}: its old text is not in the reference exactly once"
    return source.replace(mistake.old, mistake.new)


def scratch(case, where: Path) -> None:
    """A scratch kata in ``where`` whose exercises/ module of the case's stage is the case's file."""
    name, number, mistake = case
    s = stage(number)
    for file in ("conftest.py", "pyproject.toml"):
        shutil.copy2(ROOT / file, where / file)
    shutil.copytree(ROOT / "tests", where / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    (where / "exercises").mkdir()
    (where / "exercises" / "__init__.py").write_text("", encoding="utf-8")
    (where / s.source("exercises")).write_text(source_of(number, mistake), encoding="utf-8")


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in LANG_VARS and k != "KATA_IMPL"}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1", **extra}


def run_case(case, lang, where: Path) -> tuple[dict, str]:
    """The case's stage run as a plain pytest in a scratch kata; (results JSON, terminal output)."""
    name, number, _ = case
    s = stage(number)
    scratch(case, where)
    env = clean_env(KATA_LANG=lang, PYTHONIOENCODING="utf-8")
    results = where / "results.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", s.test_file, "-q", "-rf", "--no-header", "-p", "no:cacheprovider",
         "-p", "autograd_kata.core.results.channel", f"--kata-results={results}"],
        cwd=where, env=env, capture_output=True, text=True, encoding="utf-8", timeout=TIMEOUT, check=False)
    if not results.is_file():
        raise AssertionError(f"{name} ({lang}): no results, pytest exited {done.returncode}\n{done.stdout[-2000:]}"
                             f"\n{done.stderr[-2000:]}")
    return json.loads(results.read_text(encoding="utf-8")), done.stdout + done.stderr


@pytest.fixture(scope="session")
def runs(request, tmp_path_factory):
    """Every selected case's run, started together (two per core); {(case name, lang): result or error}."""
    chosen = [(item.callspec.params["case"], item.callspec.params["lang"]) for item in request.session.items
              if hasattr(item, "callspec") and {"case", "lang"} <= set(item.callspec.params)]
    places = [tmp_path_factory.mktemp(f"{case[0]}-{lang}") for case, lang in chosen]

    def one(job, where):
        try:
            return run_case(*job, where)
        except BaseException as error:  # noqa: BLE001 - reported by the case's own test
            return error

    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 1)) as pool:
        return dict(zip(((case[0], lang) for case, lang in chosen), pool.map(one, chosen, places), strict=True))


def params():
    """Every case in Japanese; the stubs in English too. A mistake's English run is
    test_mistakes.py's own run of it (KATA_LANG=en), where
    test_every_failure_line_of_the_mistake_is_in_english checks it, for every catalogued mistake."""
    for case in CASES:
        name, number, mistake = case
        for lang in ("ja", "en") if mistake is None else ("ja",):
            yield pytest.param(case, lang, id=f"{name}-{lang}")


@pytest.mark.timeout(1200)  # the first test waits for every run (the shared fixture)
@pytest.mark.parametrize("case, lang", list(params()))
def test_every_failure_line_is_in_the_chosen_language(case, lang, runs):
    done = runs[(case[0], lang)]
    if isinstance(done, BaseException):
        raise done
    results, terminal = done
    failed = [t for t in results["tests"] if t["outcome"] in ("failed", "error")]
    assert failed, f"{case[0]}: the stage passed; a stub or a classic mistake must fail it"
    trouble = []
    for test in failed:
        first = test["message"].strip().splitlines()[0]
        assert first in terminal, f"{test['name']}: the recorded message is not what the terminal showed: {first}"
        trouble += [f"{test['name']}: {line}" for line in prose_trouble(test["message"], lang)]
    assert trouble == [], "\n".join(trouble)


def test_an_ascii_terminal_asking_for_japanese_gets_one_notice_and_english(tmp_path):
    """A plain pytest run with KATA_LANG=ja on a terminal that cannot show Japanese: one
    notice, then the failures in English, and nothing that is not ASCII (no crash)."""
    case = next(c for c in CASES if c[0] == "no-reverse")
    scratch(case, tmp_path)
    done = subprocess.run([sys.executable, "-m", "pytest", stage(5).test_file, "-q", "--no-header",
                           "-p", "no:cacheprovider"],
                          cwd=tmp_path, env=clean_env(KATA_LANG="ja", PYTHONIOENCODING="ascii"),
                          capture_output=True, timeout=TIMEOUT, check=False)
    out = (done.stdout + done.stderr).decode("ascii")  # raises if anything else came
    assert done.returncode == 1, out[-2000:]
    assert out.count("cannot show Japanese") == 1, out[-2000:]
    assert "these are the numbers of the classic mistake: reverse the topological order" in out, out[-2000:]
