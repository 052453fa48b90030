"""docs/maintainers.md's recipe "Adding a stage", done for real in a scratch copy of the
working tree: ``kata new-stage`` writes a stage 9 (softmax), a maintainer fills in the files
the recipe names (HAND_EDITED, and nothing else: every file the copy changed is checked),
and then every command works with nine stages: build, status, check, hint, diff, verify,
release, grade, the mutation gate on stage 9, the site's files, and the tool tests that
read the stages (the contract of stage 9, clause by clause, the catalogues, the manifest).

* before the stage is written, its placeholders are found (``kata verify`` fails on it and
  the placeholder check names each file);
* ``kata train`` and ``kata graph`` still use the MLP stage (the manifest's role "mlp").

The copy is made once for the module: the recipe, then each command once."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.core.build import strip_markers
from autograd_kata.core.manifest import STAGES, role
from autograd_kata.maintainer.contracts import placeholder_block
from autograd_kata.maintainer.scaffold import PLACEHOLDER
from kit import ROOT, run, working_tree

pytestmark = pytest.mark.timeout(1200)

N = len(STAGES) + 1
SLUG = "softmax"
MODULE = f"stage{N:02d}_{SLUG}"
TITLE, TITLE_JA = "softmax", "ソフトマックス"
POINTS = 12
MLP = role("mlp")

#: what the scaffold writes and a person then leaves as it is
SCAFFOLDED_ONLY = ("autograd_kata/core/manifest.py", "README.md", "README.ja.md")
#: the files a maintainer writes by hand (at most 6, issue 27's goal): the engine holds the stage's
#: code and, as maintainers' notes, its contract's wrong implementations
HAND_EDITED = ("reference/engine.py", f"tests/test_{MODULE}.py", f"hints/en/{MODULE}.md", f"hints/ja/{MODULE}.md",
               f"autograd_kata/locales/en/stage{N:02d}.po", f"autograd_kata/locales/ja/stage{N:02d}.po")

DOCSTRING = ("Each logit becomes exp(logit) over the sum of every exp: a probability per class.\n"
             "You write: softmax.")
CODE = '''

def softmax(logits):
    """A probability per logit: exp(logit) / the sum of every exp (each shifted by the largest
    logit first, so no exp overflows; the shift changes no probability)."""
    # BEGIN SOLUTION
    top = max(v.data for v in logits)
    exps = [(v - top).exp() for v in logits]
    total = sum(exps)
    return [e / total for e in exps]
    # END SOLUTION
'''
TESTS = f'''"""Stage {N}: softmax, a probability for every class.

The contract, clause by clause:

- [probabilities] softmax(logits) gives one Value per logit, exp(logit) over the sum of
  every exp: each between 0 and 1, all summing to 1.
- [stable] Large logits do not overflow: each is shifted by the largest first, so
  softmax([1000, 1001]) is softmax([0, 1]).
- [gradients] The gradient of a probability reaches every logit, as central differences say.
"""
import math

from autograd_kata.core.i18n import t
from expect import Expect, numeric_grads

expect = Expect(stage={N})


def probabilities(xs):
    exps = [math.exp(x - max(xs)) for x in xs]
    return [e / sum(exps) for e in exps]


def test_softmax_gives_a_probability_per_logit(engine):
    xs = [1.0, 2.0, 0.5]
    got = engine.softmax([engine.Value(x) for x in xs])
    expect.equal(len(got), len(xs), "len(softmax([1.0, 2.0, 0.5]))", t("s{N}.probabilities"))
    for i, (p, want) in enumerate(zip(got, probabilities(xs))):
        expect.equal(p.data, want, f"softmax([1.0, 2.0, 0.5])[{{i}}].data", t("s{N}.probabilities"))


def test_softmax_of_large_logits_does_not_overflow(engine):
    xs = [1000.0, 1001.0]
    try:
        got = engine.softmax([engine.Value(x) for x in xs])
    except OverflowError:
        expect.fail(t("s{N}.stable"))
    for i, (p, want) in enumerate(zip(got, probabilities(xs))):
        expect.equal(p.data, want, f"softmax([1000.0, 1001.0])[{{i}}].data", t("s{N}.stable"))


def test_the_gradient_of_a_probability_reaches_every_logit(engine):
    xs = [0.3, -1.2, 0.8]
    logits = [engine.Value(x) for x in xs]
    engine.softmax(logits)[0].backward()
    want = numeric_grads(lambda *v: probabilities(list(v))[0], *xs)
    expect.grads(t("s{N}.gradients"), **{{f"logit{{i}}": (v, w) for i, (v, w) in enumerate(zip(logits, want))}})
'''
MESSAGES = {
    "en": (f'msgid "title.stage{N}"\nmsgstr "{TITLE}"\n\n'
           f'msgid "lesson.stage{N}"\nmsgstr "A probability per class is exp over the sum of exps, shifted so '
           f'nothing overflows."\n\n'
           f'msgid "s{N}.probabilities"\nmsgstr "softmax(logits) is exp(logit) over the sum of every exp"\n\n'
           f'msgid "s{N}.stable"\nmsgstr "shift every logit by the largest before exp, so large logits do not '
           f'overflow"\n\n'
           f'msgid "s{N}.gradients"\nmsgstr "build softmax from Values, so the gradient reaches every logit"\n'),
    "ja": (f'msgid "title.stage{N}"\nmsgstr "{TITLE_JA}"\n\n'
           f'msgid "lesson.stage{N}"\nmsgstr "クラスごとの確率は、exp を exp の合計で割ったものです。'
           f'あふれないように先にずらします。"\n\n'
           f'msgid "s{N}.probabilities"\nmsgstr "softmax(logits) は、各ロジットの exp を、'
           f'すべての exp の合計で割ったものです"\n\n'
           f'msgid "s{N}.stable"\nmsgstr "exp の前にすべてのロジットを最大のものだけずらせば、'
           f'大きなロジットでもあふれません"\n\n'
           f'msgid "s{N}.gradients"\nmsgstr "`softmax` を Value で組み立てれば、勾配はすべてのロジットに届きます"\n'),
}
HINTS = {
    "en": (f"# Stage {N} — {TITLE}\n\n## Level 1 — why\n\nA probability per class: positive, summing to 1.\n\n"
           "## Level 2 — the shape\n\nexp of each logit, then divide each by their sum.\n\n"
           "## Level 3 — nearly the answer\n\nSubtract the largest logit's data before `exp()`.\n"),
    "ja": (f"# ステージ{N}：{TITLE_JA}\n\n## レベル1：なぜ\n\nクラスごとの確率は正で、合計が 1 になります。\n\n"
           "## レベル2：形\n\n各ロジットの exp を取り、それぞれを合計で割ります。\n\n"
           "## レベル3：ほぼ答え\n\n`exp()` の前に、いちばん大きなロジットの data を引きます。\n"),
}
#: the stage's contract, broken clause by clause: the notes this stage's block of reference/engine.py's
#: last section holds, in the scaffold's placeholder block's place
CONTRACT = f"""##
## stage {N} contract, [probabilities] softmax-unnormalised: returns the exps undivided
##   says: softmax(logits) is exp(logit) over the sum of every exp
##   -    return [e / total for e in exps]
##   +    return exps
## stage {N} contract, [stable] softmax-unshifted: exponentiates the logits unshifted
##   says: shift every logit by the largest before exp
##   -    top = max(v.data for v in logits)
##   +    top = 0.0
## stage {N} contract, [gradients] softmax-detached: wraps plain-float probabilities in new Values
##   says: the gradient reaches every logit
##   -    return [e / total for e in exps]
##   +    return [Value(e.data / total.data) for e in exps]
"""


def kata(copy: Path, *args: str, timeout: int = 300):
    """``kata ARGS`` in the copy, with the copy's own package: (exit code, stdout, stderr)."""
    done = run([sys.executable, "-m", "autograd_kata", *args], cwd=copy,
               env={"KATA_LANG": "en", "NO_COLOR": "1", "MPLBACKEND": "Agg", "PYTHONPATH": str(copy)},
               timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the recipe's anchor {old!r} is not once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def placeholders(root: Path) -> list[str]:
    """The files of the kata at ``root`` that still hold the scaffold's placeholder."""
    own = {"autograd_kata/maintainer/scaffold.py", "tooltests/test_add_stage.py"}
    found = []
    for folder in ("autograd_kata", "reference", "tests", "hints", "tooltests"):
        for path in sorted((root / folder).rglob("*")):
            name = path.relative_to(root).as_posix()
            if path.suffix in (".py", ".po", ".md") and name not in own and PLACEHOLDER in path.read_text("utf-8"):
                found.append(name)
    return found + [name for name in ("README.md", "README.ja.md") if PLACEHOLDER in (root / name).read_text("utf-8")]


def changed(root: Path) -> list[str]:
    """The files of the copy that are new or differ from the working tree's (generated trees aside)."""
    names = []
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if not path.is_file() or name.startswith(("solutions/", "exercises/")) \
                or {"__pycache__", ".pytest_cache", ".hypothesis", ".kata", "mutants"} & set(path.parts):
            continue  # the generated trees, and what running the tests leaves
        if not (ROOT / name).is_file() or (ROOT / name).read_bytes() != path.read_bytes():
            names.append(name)
    return names


def fill_in(copy: Path) -> None:
    """What a person writes into the scaffold's files: the stage's code and contract, tests, messages, hints."""
    engine = copy / "reference" / "engine.py"
    replace(engine, f"{PLACEHOLDER}: what the stage teaches.\nYou write: {PLACEHOLDER}.", DOCSTRING)
    text = engine.read_text(encoding="utf-8")
    start = text.index(f"\n\ndef stage_{N}():")
    engine.write_text(text[:start] + CODE + text[text.index("# <<\n", start):], encoding="utf-8")
    (copy / HAND_EDITED[1]).write_text(TESTS, encoding="utf-8")
    for lang in ("en", "ja"):
        (copy / f"hints/{lang}/{MODULE}.md").write_text(HINTS[lang], encoding="utf-8")
        po = copy / f"autograd_kata/locales/{lang}/stage{N:02d}.po"
        text = po.read_text(encoding="utf-8")
        po.write_text(text[:text.index(f'msgid "title.stage{N}"')] + MESSAGES[lang], encoding="utf-8")
    replace(engine, placeholder_block(N, PLACEHOLDER), CONTRACT)  # the contract's notes, the file's end


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    """The copy after the recipe, and what each command said."""
    copy = working_tree(tmp_path_factory.mktemp("add-stage") / "kata")
    said = {"refused": kata(copy, "new-stage", str(N + 1), SLUG, "--title", TITLE, "--title-ja", TITLE_JA)}
    taken = copy / f"hints/ja/{MODULE}.md"  # work of someone's, where the scaffold would write
    taken.write_text("mine\n", encoding="utf-8")
    said["taken"] = kata(copy, "new-stage", str(N), SLUG, "--title", TITLE, "--title-ja", TITLE_JA)
    said["taken kept"] = (taken.read_text(encoding="utf-8") == "mine\n"
                          and changed(copy) == [taken.relative_to(copy).as_posix()])
    taken.unlink()
    said["new-stage"] = kata(copy, "new-stage", str(N), SLUG, "--title", TITLE, "--title-ja", TITLE_JA,
                             "--points", str(POINTS))
    said["again"] = kata(copy, "new-stage", str(N), SLUG, "--title", TITLE, "--title-ja", TITLE_JA)
    said["placeholders"] = placeholders(copy)
    said["unwritten build"] = kata(copy, "build")
    said["unwritten verify"] = kata(copy, "verify")
    fill_in(copy)
    said["changed"] = changed(copy)
    said["left"] = placeholders(copy)
    for step in (("build",), ("build", "--check"), ("status",), ("check", str(N)), ("hint", str(N)),
                 ("hint", str(N), "--lang", "ja"), ("diff", str(N), "--previous"), ("verify",),
                 ("release", str(copy.parent / "release")), ("mutate", "--stage", str(N))):
        said[" ".join(step[:1] if step[0] == "release" else step)] = kata(copy, *step, timeout=900)
    submission = copy.parent / "submission"
    submission.mkdir(parents=True)
    for s in (*STAGES, None):
        module = f"{MODULE}.py" if s is None else f"{s.module}.py"
        text = (copy / "solutions" / module).read_text(encoding="utf-8")
        (submission / module).write_text(strip_markers(text), encoding="utf-8")
    said["grade"] = kata(copy, "grade", "--submission", str(submission), "--stage", str(N), "--format", "json",
                         "--out", str(copy.parent / "grade.json"))
    return copy, said


def test_the_scaffold_writes_only_the_next_stage_and_never_over_a_file(added):
    _, said = added
    code, _, err = said["refused"]
    assert code == 2 and f"the next stage is {N}, not {N + 1}" in err, err
    code, out, err = said["new-stage"]
    assert code == 0, out + err
    code, _, err = said["taken"]
    assert code == 2 and f"hints/ja/{MODULE}.md already there: nothing written" in err, err
    assert said["taken kept"], "the refused scaffold wrote something"
    code, _, err = said["again"]
    assert code == 2 and f"the next stage is {N + 1}, not {N}" in err, err


def test_an_unwritten_stage_is_found_by_verify_and_by_its_placeholders(added):
    _, said = added
    assert set(said["placeholders"]) >= set(HAND_EDITED), said["placeholders"]
    assert said["unwritten build"][0] == 0, said["unwritten build"]
    code, out, err = said["unwritten verify"]
    assert code == 1 and f"{N} " in out, out + err


def test_the_recipe_edits_only_the_files_it_names(added):
    _, said = added
    assert said["left"] == [], f"placeholders left after the recipe: {said['left']}"
    assert said["changed"] == sorted({*SCAFFOLDED_ONLY, *HAND_EDITED}), said["changed"]
    assert len(HAND_EDITED) <= 6, HAND_EDITED


def test_build_status_check_hint_and_diff_know_the_new_stage(added):
    copy, said = added
    for step in ("build", "build --check", "status"):
        assert said[step][0] == 0, (step, said[step])
    row = next(line for line in said["status"][1].splitlines() if line.lstrip().startswith(f"{N} "))
    assert TITLE in row and "not started" in row, said["status"][1]  # its pristine stub: no test run
    code, out, _ = said[f"check {N}"]
    assert code == 1 and f"kata hint {N}" in out and f"stage {N}: write softmax" in out, out
    assert said[f"hint {N}"][0] == 0 and "A probability per class" in said[f"hint {N}"][1], said[f"hint {N}"]
    # the next level (kata hint moves on), in Japanese
    assert "各ロジットの exp" in said[f"hint {N} --lang ja"][1], said[f"hint {N} --lang ja"]
    code, out, err = said[f"diff {N} --previous"]
    assert code == 0 and "def softmax(logits):" in out, out + err
    for s in STAGES:  # the new stage changes no earlier module
        for impl in ("solutions", "exercises"):
            assert (copy / s.source(impl)).read_bytes() == (ROOT / s.source(impl)).read_bytes(), s.source(impl)


def test_verify_release_and_grade_take_the_new_stage(added):
    copy, said = added
    code, out, err = said["verify"]
    assert code == 0, out + err
    row = next(line for line in out.splitlines() if line.startswith(f"{N} "))
    assert "3/3 passed" in row and "3/3 failed" in row and row.endswith("ok"), row
    code, out, err = said["release"]
    assert code == 0, out + err
    release = copy.parent / "release"
    for name in (f"exercises/{MODULE}.py", f"tests/test_{MODULE}.py", f"hints/ja/{MODULE}.md"):
        assert (release / name).is_file(), name
    stub = (release / f"exercises/{MODULE}.py").read_text(encoding="utf-8")
    assert not (release / "solutions").exists() and "BEGIN SOLUTION" not in stub and "max(v.data" not in stub
    code, out, err = said["grade"]
    assert code == 0, out + err
    graded = json.loads((copy.parent / "grade.json").read_text(encoding="utf-8"))
    assert [s["number"] for s in graded["stages"]] == [N] and graded["score"] == graded["max_score"] == POINTS, graded


def test_the_mutation_gate_of_the_new_stage_kills_every_mutant(added):
    _, said = added
    code, out, err = said[f"mutate --stage {N}"]
    assert code == 0 and f"every mutant of stage {N} is killed" in out, out[-3000:] + err[-2000:]
    assert re.search(rf"{MODULE}\s+(\d+)\s+0\s+0\s+0\s+0\s+\1", out), out[-3000:]


def test_the_sites_files_hold_the_new_stage(added):
    copy, _ = added
    done = run([sys.executable, "-c", "import json; from pathlib import Path; from autograd_kata.site.build import "
                "learner_files; print(json.dumps(sorted(learner_files(Path('.')))))"], cwd=copy,
               env={"PYTHONPATH": str(copy)})
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)
    assert {f"exercises/{MODULE}.py", f"tests/test_{MODULE}.py", f"hints/en/{MODULE}.md"} <= set(files), files


def test_the_tool_tests_that_read_the_stages_pass_with_it(added):
    copy, _ = added
    readers = {
        "tooltests/test_contracts.py": "every_clause or (breaks_the_stage and softmax) or (another_right and 9)",
        "tooltests/test_manifest.py": "",
        "tooltests/test_i18n.py": "every_id_is_translated or japanese",
        "tooltests/test_readme_counts.py": "no_count",
        "tooltests/test_add_stage.py": "no_placeholder",
    }
    keys = " or ".join(f"({k})" for k in readers.values() if k) + " or manifest"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-vv", *readers, "-k", keys],
                          cwd=copy, capture_output=True, text=True, timeout=900, check=False,
                          env={**os.environ, "KATA_IMPL": "", "PYTHONPATH": str(copy)})
    out = done.stdout + done.stderr
    assert done.returncode == 0, out[-5000:]
    for case in ("test_every_clause_of_every_stage_has_a_smallest_wrong_implementation PASSED",
                 "test_the_clause_breaks_the_stage_by_name[softmax-unnormalised] PASSED",
                 "test_the_clause_breaks_the_stage_by_name[softmax-unshifted] PASSED",
                 "test_the_clause_breaks_the_stage_by_name[softmax-detached] PASSED",
                 f"test_another_right_way_passes[reflected-ops-aliased-{N}] PASSED",
                 "test_no_placeholder_of_the_scaffold_is_left PASSED"):
        assert case in out, f"no {case!r} among the readers' cases:\n{out[-3000:]}"


def test_no_placeholder_of_the_scaffold_is_left():
    found = placeholders(ROOT)
    assert not found, f"files still holding the scaffold's {PLACEHOLDER!r}: {found}: write them (kata new-stage)"


def test_kata_graph_and_train_still_use_the_mlp_stage(added):
    copy, _ = added
    code, out, err = kata(copy, "graph", "--no-backward")
    assert code == 0, out + err
    assert out.splitlines()[0].endswith(f"({MLP.source('exercises')}, before backward())"), out
    assert MODULE not in out + err
    if importlib.util.find_spec("matplotlib") is None:
        return  # kata train needs the pictures extra
    code, out, err = kata(copy, "train", "--steps", "3", "--points", "8", "--batch", "4", "--out", "train.png")
    assert code == 0, out + err
    assert f"training {MLP.source('solutions')}'s MLP" in err and MODULE not in out + err, err
