"""What a student copy says and ships: no solution line in the tool it installs.

The leak scan (``core/leaks.py``) looks for every solution region whole and for
every long line of one on its own, so stage 8's loss line re-wrapped into a
helper of the tool (``core/training.py`` once held ``train`` that way) is found."""
from __future__ import annotations

import shutil

from autograd_kata.core.build import regions
from autograd_kata.core.leaks import MIN_LINE_LEAK, normalize, scan
from autograd_kata.core.manifest import STAGES
from kit import ROOT


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
