"""``kata grade --class --lang ja`` is Japanese end to end (issue 31): each student's report (its
reasons cross the process pool as catalogue data, never as English words), the summary, the
command's own lines, the merged shards' reports and summary, and Classroom 50's result.json.
Each counts the English prose left (test_i18n's ``english_words``: code, names and paths aside)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_i18n import english_words

from autograd_kata.classroom.course import outputs
from autograd_kata.core.manifest import stage
from kit import ROOT, reference, run, stub

pytestmark = pytest.mark.timeout(300)
KATA = [sys.executable, "-m", "autograd_kata.instructor", "--lang", "ja"]
GRADED = ["--stage", "1", "--stage", "2", "--stage-timeout", "5"]


def put(klass: Path, name: str, n: int, source: str) -> None:
    path = klass / name / stage(n).source("exercises")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Path:
    """Japanese names (an ASCII name would count as English): a pass, a classic mistake and an
    untouched stub, a hang, a wrong rule."""
    folder = tmp_path_factory.mktemp("class")
    put(folder, "学生1", 1, reference(1))
    put(folder, "学生1", 2, reference(2))
    put(folder, "学生2", 1, reference(1).replace("self.data = float(data)", "self.data = data", 1))
    put(folder, "学生2", 2, stub(2))
    put(folder, "学生3", 1, "while True:\n    pass\n")
    put(folder, "山田 太郎", 1, reference(1))
    put(folder, "山田 太郎", 2, reference(2).replace("+ other.data", "- other.data", 1))
    return folder


def english(text: str) -> list[str]:
    return english_words(text)


def test_a_class_graded_in_japanese_has_no_english_prose(klass, tmp_path):
    out = tmp_path / "grades.csv"
    proc = run(KATA + ["grade", "--class", str(klass), "--out", str(out), "--workers", "2", *GRADED], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert english(proc.stdout) == [], proc.stdout
    reports = sorted(outputs.reports_dir(out).glob("*.txt"))
    assert len(reports) == 4
    for path in reports:
        text = path.read_text(encoding="utf-8")
        assert english(text) == [], f"{path.name}:\n{text}"
    assert "通りませんでした" in (outputs.reports_dir(out) / "学生2.txt").read_text(encoding="utf-8")
    assert "秒以内に終わりませんでした" in (outputs.reports_dir(out) / "学生3.txt").read_text(encoding="utf-8")
    summary = outputs.summary_path(out).read_text(encoding="utf-8")
    assert english(summary) == [], summary
    again = run(KATA + ["grade", "--class", str(klass), "--out", str(out), *GRADED], cwd=ROOT)
    assert again.returncode == 0 and english(again.stdout) == [], again.stdout


def test_merged_shards_in_japanese_have_no_english_prose(klass, tmp_path):
    csvs = []
    for k in (1, 2):
        csvs.append(tmp_path / f"shard{k}.csv")
        proc = run(KATA + ["grade", "--class", str(klass), "--shard", f"{k}/2", "--out", str(csvs[-1]), *GRADED],
                   cwd=ROOT)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = tmp_path / "all.csv"
    proc = run(KATA + ["grade", "--merge", *map(str, csvs), "--out", str(merged)], cwd=ROOT)
    assert proc.returncode == 0 and english(proc.stdout) == [], proc.stdout + proc.stderr
    for path in sorted(outputs.reports_dir(merged).glob("*.txt")) + [outputs.summary_path(merged)]:
        text = path.read_text(encoding="utf-8")
        assert english(text) == [], f"{path.name}:\n{text}"
    assert len(list(outputs.reports_dir(merged).glob("*.txt"))) == 4


def test_classroom50s_result_json_in_japanese_has_no_english_prose(klass, tmp_path):
    folder = tmp_path / "autograder"
    proc = run(KATA + ["autograder", "--classroom50", str(folder)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checkout = klass / "学生2"
    done = run([sys.executable, str(folder / "autograder.py")], cwd=checkout, env={"KATA_PYTHON": sys.executable},
               timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    (checkout / "result.json").unlink()
    (checkout / "release-body.md").unlink()
    words = [(t["test-name"], english(t["test-name"] + "\n" + t["message"])) for t in result["tests"]]
    assert all(found == [] for _, found in words), words
    assert result["tests"][0]["test-name"].startswith("ステージ 1")
