"""What a student copy says and ships: no solution line in the tool it installs, no test run on a
fresh copy's untouched stubs, and a README and ``--help`` that name only what the copy can do.

The leak scan (``core/leaks.py``) looks for every solution region whole and for
every long line of one on its own, so stage 8's loss line re-wrapped into a
helper of the tool (``core/training.py`` once held ``train`` that way) is found."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from autograd_kata.core.build import regions
from autograd_kata.core.leaks import MIN_LINE_LEAK, normalize, scan
from autograd_kata.core.manifest import STAGES
from kit import ROOT

pytestmark = pytest.mark.timeout(600)  # every command a copy names is run, each in its own process


def the_tool(dest):
    """The tool package as the wheel ships it: without the maintainers' checks (they quote the reference)."""
    shutil.copytree(ROOT / "autograd_kata", dest / "autograd_kata",
                    ignore=shutil.ignore_patterns("maintainer", "kit", "__pycache__"))
    return dest


def test_the_tool_holds_no_solution_line(tmp_path):
    tool = the_tool(tmp_path)
    assert (tool / "autograd_kata" / "core" / "training.py").is_file()
    assert scan(tool, ROOT) == []


def long_lines(n):
    s = STAGES[n - 1]
    text = (ROOT / s.source("solutions")).read_text(encoding="utf-8")
    return [line.strip() for r in regions(text, s) for line in r.text.splitlines()
            if len(normalize(line)) >= MIN_LINE_LEAK]


def test_one_long_solution_line_in_other_code_is_a_leak(tmp_path):
    loss_line = next(line for line in long_lines(8) if "zip(xs, ys" in line)
    (tmp_path / "training.py").write_text(f"def mse(model, xs, ys):\n    {loss_line}\n    return errors\n")
    assert [(leak.path, leak.stage, leak.owner) for leak in scan(tmp_path, ROOT)] == [("training.py", 8, "train")]


def test_a_short_common_line_is_not_a_leak(tmp_path):
    (tmp_path / "update.py").write_text("def update(model, lr):\n    for p in model.parameters():\n"
                                        "        p.data -= lr * p.grad\n")
    assert scan(tmp_path, ROOT) == []


def test_the_first_kata_in_a_fresh_copy_runs_no_test(tmp_path, capsys, monkeypatch):
    """Untouched stubs match the pristine copy: "not started", with no pytest run."""
    from autograd_kata.core import runner
    from kit import run_kata

    dest = tmp_path / "kata"
    assert run_kata(capsys, "init", str(dest))[0] == 0
    monkeypatch.chdir(dest)
    monkeypatch.setenv("KATA_LANG", "en")

    def refuse(*args, **kwargs):
        raise AssertionError("a test run on untouched stubs")
    monkeypatch.setattr(runner, "run", refuse)
    code, out, _ = run_kata(capsys)
    assert code == 0
    rows = [line for line in out.splitlines() if line[:2].strip().isdigit()]
    assert len(rows) == len(STAGES) and all(row.split()[-3:] == ["-", "not", "started"] for row in rows), out
    assert out.splitlines()[-1].startswith("Next: stage 1 ")


# --- what a copy's README and --help name, it can do ------------------------------------

READMES = ("README.md", "README.ja.md")
REFUSED = re.compile(r"refus|断")  # a line that announces a refusal
NOT_RUN = ("watch", "train", "explore")  # they block, open a browser or take long: their --help only
COMMAND = re.compile(r"`(kata [^`]*)`")


@pytest.fixture(scope="module", params=["init", "release"])
def copy(request, tmp_path_factory):
    """A student copy as ``kata init`` and as ``kata release`` write it."""
    dest = tmp_path_factory.mktemp(request.param) / "kata"
    if request.param == "init":
        done = kata(["init", str(dest)], ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
    else:
        from autograd_kata.classroom.release import release
        said: list[str] = []
        assert release(ROOT, dest, out=said.append) == 0, said
    return dest


def kata(argv, cwd, timeout=120):
    env = {**os.environ, "KATA_LANG": "en", "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "autograd_kata", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, encoding="utf-8", timeout=timeout, stdin=subprocess.DEVNULL, check=False)


def readme_commands(copy):
    """{the command line: every README line naming it} for every `kata ...` of the copy's READMEs."""
    found: dict[str, str] = {}
    for name in READMES:
        for line in (copy / name).read_text(encoding="utf-8").splitlines():
            for span in COMMAND.findall(line):
                command = span.replace("\\|", "|").split("|")[0].strip()
                found[command] = found.get(command, "") + "\n" + line
    said_of = {}  # a refusal is announced by any line that names the same command
    for command, lines in found.items():
        word = command.split()[1] if len(command.split()) > 1 else ""
        said_of[word] = said_of.get(word, "") + lines
    return {command: said_of[command.split()[1] if len(command.split()) > 1 else ""] for command in found}


def test_the_copys_readme_numbers_its_steps_without_a_gap(copy):
    for name in READMES:
        numbers, lists = [], []
        for line in (copy / name).read_text(encoding="utf-8").splitlines():
            item = re.match(r"(\d+)\. ", line)
            if item:
                numbers.append(int(item[1]))
            elif not line.startswith(" ") and numbers:
                lists.append(numbers)
                numbers = []
        assert lists and all(n == list(range(1, len(n) + 1)) for n in lists), (name, lists)


def test_every_command_the_copy_names_is_one_it_has(copy):
    """Every `kata X` of the README and of `kata --help`: its --help answers (no refusal, no traceback)."""
    listed = kata(["--help"], copy)
    assert listed.returncode == 0, listed.stderr
    names = set(re.findall(r"^    ([a-z]+)\s", listed.stdout, re.M))
    assert {"status", "check", "hint"} <= names, listed.stdout
    named = {line.split()[1] for line in readme_commands(copy) if len(line.split()) > 1}
    for name in sorted(names | named):
        done = kata([name, "--help"], copy)
        assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, \
            f"`kata {name}` is named by the copy but `kata {name} --help` says:\n{done.stdout}{done.stderr}"
        offers = [sentence for sentence in re.split(r"(?<=[.)])\s", " ".join(done.stdout.split()))
                  if "reference" in sentence and not re.search(r"where the copy has one|no reference", sentence)]
        assert not offers, f"`kata {name} --help` offers the reference, which the copy does not have: {offers}"


def test_every_command_line_of_the_readme_runs_or_says_why_not(copy, tmp_path):
    """Each `kata ...` line of the README, run in the copy (N is 1): never a traceback, and a
    refusal only where the README's line says the command refuses."""
    for line, context in readme_commands(copy).items():
        argv = shlex.split(line.replace("[N]", "1").replace("N+1", "2").replace(" N", " 1"))[1:]
        if argv and argv[0] in NOT_RUN and "--no-open" not in argv:
            continue
        if argv[:1] == ["init"]:
            argv = ["init", str(tmp_path / f"init{len(list(tmp_path.iterdir()))}")]
        argv = [a for a in argv if a not in ("[DIR]", "DIR", "&&")]
        done = kata(argv, copy)
        said = done.stdout + done.stderr
        assert "Traceback" not in said, f"`{line}` in the copy:\n{said}"
        assert done.returncode in (0, 1) or REFUSED.search(context), \
            f"`{line}` is refused in the copy (exit {done.returncode}), and the README does not say so:\n{said}"


def test_the_reference_a_copy_lacks_is_refused_in_words(copy):
    for command in (["graph", "--stage", "2", "--impl", "solutions", "--no-backward", "--out", "g.txt"],
                    ["train", "--impl", "solutions", "--steps", "1"]):
        done = kata(command, copy)
        said = done.stdout + done.stderr
        assert done.returncode != 0 and "Traceback" not in said and "ModuleNotFoundError" not in said, said
        assert "has no reference" in said, said
