"""README's recipe "Adding a stage", followed step by step in a scratch copy of the
working tree: a small stage 9 (SGD with momentum) is added as the recipe says, and
then the kata still works around it.

* before its catalogue entries exist, `kata status` and `kata` say which id to add,
  in one line (no traceback);
* after the recipe: `kata build` and `kata verify` are ok, `kata status` lists nine
  stages, stage 9's tests pass on the reference and fail on the stub;
* `kata train` and `kata graph` still use the MLP stage (the manifest's role "mlp",
  stage 8), not the last one.

The copy is made once for the module (kata verify runs every stage twice)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autograd_kata.core.manifest import STAGES, role
from kit import ROOT, clone, run

pytestmark = pytest.mark.timeout(240)

N = len(STAGES) + 1
MODULE = f"stage{N:02d}_momentum"
MLP = role("mlp")

STAGE_ROW = f'    Stage({N}, "momentum", "SGD with momentum", 10, "lesson.stage{N}", "title.stage{N}"),\n'

DOCSTRING = f'''# >> stage {N} only
"""Stage {N} - SGD with momentum.

Plain gradient descent forgets where it was going; momentum keeps a velocity
per parameter, so steps that agree add up.
You write: SGD.step.

Run the tests:  pytest tests/test_{MODULE}.py   (or: kata check {N})
Stuck?         kata hint {N}
"""
# <<
'''

CODE = f'''# >> stage {N}


class SGD:
    """Gradient descent with momentum over ``params`` (Values)."""

    def __init__(self, params, lr=0.1, momentum=0.9):
        self.params = list(params)
        self.lr = lr
        self.momentum = momentum
        self.velocity = [0.0 for _ in self.params]

    def step(self):
        """velocity = momentum * velocity + grad; data -= lr * velocity, for every parameter."""
        # BEGIN SOLUTION
        for i, p in enumerate(self.params):
            self.velocity[i] = self.momentum * self.velocity[i] + p.grad
            p.data -= self.lr * self.velocity[i]
        # END SOLUTION
# <<
'''

TESTS = f'''"""Stage {N}: SGD with momentum. Each step adds the gradient to a velocity that
remembers momentum times the last one, and moves the data against it."""
import pytest

from autograd_kata.core.i18n import t

RULE = t("s{N}.rule")


@pytest.mark.parametrize("steps, expected", [(1, 0.8), (2, 0.5), (3, 0.15)])
def test_each_step_moves_by_lr_times_the_velocity(engine, steps, expected):
    w = engine.Value(1.0)
    w.grad = 2.0
    opt = engine.SGD([w], lr=0.1, momentum=0.5)
    for _ in range(steps):
        opt.step()
    assert w.data == pytest.approx(expected), t("s{N}.step", steps=steps, expected=expected, got=w.data, rule=RULE)
'''

MESSAGES = {
    "en": (f'msgid "title.stage{N}"\nmsgstr "SGD with momentum"\n\n'
           f'msgid "lesson.stage{N}"\nmsgstr "A velocity per parameter carries the last steps into the next."\n\n'
           f'msgid "s{N}.rule"\nmsgstr "velocity = momentum * velocity + grad, then data -= lr * velocity"\n\n'
           f'msgid "s{N}.step"\nmsgstr "after {{steps}} steps from data 1.0 with grad 2.0 '
           f'(lr=0.1, momentum=0.5), expected data {{expected}}, got {{got}}: {{rule}}"\n'),
    "ja": (f'msgid "title.stage{N}"\nmsgstr "モーメンタム付き SGD"\n\n'
           f'msgid "lesson.stage{N}"\nmsgstr "パラメータごとの速度が、これまでの歩みを次の一歩へ運びます。"\n\n'
           f'msgid "s{N}.rule"\nmsgstr "velocity = momentum * velocity + grad、そのあと data -= lr * velocity"\n\n'
           f'msgid "s{N}.step"\nmsgstr "data 1.0・grad 2.0（lr=0.1、momentum=0.5）から {{steps}} ステップ進めたあと、'
           f'data は {{expected}} になるはずが {{got}} でした: {{rule}}"\n'),
}

HINTS = {
    "en": (f"# Stage {N} — SGD with momentum\n\n## Level 1 — the idea\n\nKeep one velocity per parameter.\n\n"
           "## Level 2 — the shape\n\nUpdate the velocity first, then move the data by it.\n\n"
           "## Level 3 — nearly the answer\n\nLoop with `enumerate(self.params)`.\n"),
    "ja": (f"# ステージ{N}：モーメンタム付き SGD\n\n## レベル1：考え方\n\nパラメータごとに速度を 1 つ持ちます。\n\n"
           "## レベル2：形\n\n先に速度を更新し、その速度で data を動かします。\n\n"
           "## レベル3：ほぼ答え\n\n`enumerate(self.params)` で回します。\n"),
}


def kata(copy: Path, *args: str, timeout: int = 180):
    """``kata ARGS`` in the copy, with the copy's own package (the working directory comes
    first on the path): (exit code, stdout, stderr)."""
    done = run([sys.executable, "-m", "autograd_kata", *args], cwd=copy,
               env={"KATA_LANG": "en", "NO_COLOR": "1", "MPLBACKEND": "Agg"}, timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"the recipe's anchor {old!r} is not once in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    """The copy after each step of the recipe, and what `kata` said on the way."""
    copy = clone(tmp_path_factory.mktemp("add-stage") / "kata")
    said = {}
    # 1. the manifest: a Stage, no role (the MLP stays stage 8's)
    manifest = copy / "autograd_kata" / "core" / "manifest.py"
    text = manifest.read_text(encoding="utf-8")
    start = text.index("STAGES: tuple[Stage, ...] = (\n")
    end = text.index("\n)\n", start) + 1  # the tuple's closing line (a Stage may span lines)
    manifest.write_text(text[:end] + STAGE_ROW + text[end:], encoding="utf-8")
    said["no catalogue: status"] = kata(copy, "status")
    said["no catalogue: kata"] = kata(copy)
    # 2. the catalogue: the title, the lesson and the test's messages, in English and Japanese
    for lang, block in MESSAGES.items():
        header = (copy / "autograd_kata" / "locales" / lang / "stage08.po").read_text(encoding="utf-8")
        header = header[:header.index("\n\n", header.index('msgid ""')) + 2]
        (copy / "autograd_kata" / "locales" / lang / f"stage{N:02d}.po").write_text(header + block, encoding="utf-8")
    # 3. the code, in the one engine source: the docstring after the last one, the code at the end
    engine = copy / "reference" / "engine.py"
    docs = engine.read_text(encoding="utf-8")
    start = docs.index(f"# >> stage {N - 1} only\n")
    end = docs.index("# <<\n", start) + len("# <<\n")
    engine.write_text(docs[:end] + DOCSTRING + docs[end:].rstrip("\n") + "\n" + CODE, encoding="utf-8")
    # 4. the tests and the hints
    (copy / "tests" / f"test_{MODULE}.py").write_text(TESTS, encoding="utf-8")
    for lang, text in HINTS.items():
        (copy / "hints" / lang / f"{MODULE}.md").write_text(text, encoding="utf-8")
    # 5. README's stage table
    readme = copy / "README.md"
    row = next(line for line in readme.read_text(encoding="utf-8").splitlines(keepends=True)
               if f"`{MLP.module}`" in line and line.startswith("|"))
    edit(readme, row, row + f"| {N} | `{MODULE}` | `SGD.step` | how do steps that agree add up? |\n")
    # 6. build and verify
    said["build"] = kata(copy, "build")
    said["verify"] = kata(copy, "verify")
    return copy, said


def test_a_stage_without_its_catalogue_entries_is_one_line_naming_the_id(added):
    _, said = added
    for step in ("no catalogue: status", "no catalogue: kata"):
        code, out, err = said[step]
        assert code == 1 and "Traceback" not in err, (step, err)
        assert err.startswith(f"kata: stage {N} names the message title.stage{N} (title_id in "
                              "autograd_kata/core/manifest.py)"), (step, err)
        assert f"locales/{{en,ja}}/stage{N:02d}.po" in err, (step, err)
        assert err.count("\n") == 1, err


def test_build_and_verify_are_ok(added):
    copy, said = added
    code, out, err = said["build"]
    assert code == 0, out + err
    assert (copy / "solutions" / f"{MODULE}.py").is_file() and (copy / "exercises" / f"{MODULE}.py").is_file()
    for s in STAGES:  # the new stage changes no earlier module
        for impl in ("solutions", "exercises"):
            assert (copy / s.source(impl)).read_bytes() == (ROOT / s.source(impl)).read_bytes(), s.source(impl)
    code, out, err = said["verify"]
    assert code == 0, out + err
    row = next(line for line in out.splitlines() if line.startswith(f"{N} "))
    assert "SGD with momentum" in row and "3/3 passed" in row and "3/3 failed" in row and row.endswith("ok"), row


def test_status_lists_the_new_stage_by_its_catalogue_title(added):
    copy, _ = added
    code, out, err = kata(copy, "status")
    assert code == 0 and err == "", err
    row = next(line for line in out.splitlines() if line.lstrip().startswith(f"{N} "))
    assert "SGD with momentum" in row and "0/3" in row, out
    code, out, err = kata(copy, "status", "--lang", "ja")
    assert code == 0 and "モーメンタム付き SGD" in out, out + err


def test_the_new_stages_tests_pass_on_the_reference_and_fail_on_the_stub(added):
    copy, _ = added
    test_file = f"tests/test_{MODULE}.py"
    ref = run([sys.executable, "-m", "pytest", test_file, "--impl", "solutions", "-q", "-p", "no:cacheprovider"],
              cwd=copy, env={"KATA_LANG": "en"})
    assert ref.returncode == 0 and "3 passed" in ref.stdout, ref.stdout + ref.stderr
    stub = run([sys.executable, "-m", "pytest", test_file, "-q", "-p", "no:cacheprovider"], cwd=copy,
               env={"KATA_LANG": "en"})
    assert stub.returncode == 1 and "3 failed" in stub.stdout, stub.stdout
    assert f"stage {N}: write SGD.step" in stub.stdout, stub.stdout
    code, out, err = kata(copy, "check", str(N))
    assert code == 1 and f"kata hint {N}" in out, out + err


def test_kata_graph_still_draws_the_mlp_stage(added):
    copy, _ = added
    code, out, err = kata(copy, "graph", "--no-backward")
    assert code == 0, out + err
    assert out.splitlines()[0].endswith(f"({MLP.source('exercises')}, before backward())"), out
    assert MODULE not in out + err


def test_kata_train_still_trains_the_mlp_stage(added):
    pytest.importorskip("matplotlib", reason="kata train needs the pictures extra: pip install -e '.[pictures]'")
    copy, _ = added
    code, out, err = kata(copy, "train", "--steps", "3", "--points", "8", "--batch", "4", "--out", "train.png")
    assert code == 0, out + err
    # the MLP stage's stub is unwritten in the copy: kata train says so and trains the reference of stage 8
    assert f"stage {MLP.number} is not written yet" in err, err
    assert f"training {MLP.source('solutions')}'s MLP" in err, err
    assert MODULE not in out + err
    assert (copy / "train.png").is_file()
