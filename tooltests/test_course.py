"""``kata grade --class`` for a whole course (classroom/course/run.py): the CSV, every
student's reports, resuming, one student regraded, seeds, shards and merges, the
class summary, and the Kubernetes and Actions files README gives.

Most tests grade with a stand-in for ``grade.grade`` (``fake_grade``: a Report made
from each stage file's one line) so the course logic is tested in milliseconds;
``test_a_real_class`` grades six real submissions through the judge, and
``test_a_seed_reproduces_a_report_byte_for_byte`` one, twice. The planted
classic mistakes are test_mistakes.py's (they reuse its stage runs).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from autograd_kata.classroom.course import outputs as class_outputs
from autograd_kata.classroom.course import roster
from autograd_kata.classroom.course import run as course
from autograd_kata.classroom.grading.report import Report, StageGrade
from autograd_kata.core.errors import Refusal
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.mistakes import PHRASES, label
from autograd_kata.core.results.model import TestResult as Result
from kit import reference, run, stub

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parent.parent
TWO = (stage(1), stage(2))


# --- a stand-in for grade.grade -----------------------------------------------------------

def fake_grade(submission, grader_root, stages, stage_timeout=30.0, jobs=None, seed=None, calls=None):
    """A Report from each stage file's first line: PASS, or the failure message (the judge's words)."""
    if calls is not None:
        calls.append(Path(submission).name)
    graded = []
    for s in stages:
        path = Path(submission) / s.source("exercises")
        if not path.is_file():
            graded.append(StageGrade(s, problem=f"no {s.source('exercises')} in the submission"))
            continue
        line = path.read_text(encoding="utf-8").splitlines()[0] if path.read_text(encoding="utf-8") else ""
        g = StageGrade(s, source=s.source("exercises"), found=[s.source("exercises")])
        if line == "PASS":
            g.tests = [Result(f"{s.test_file}::test_a", "passed")]
        else:
            g.tests = [Result(f"{s.test_file}::test_a", "failed", line, kind=fake_kind(line),
                              mistakes=fake_mistakes(line, s.number))]
            g.problem = f"1 of 1 tests did not pass; first: test_a: {line}"
        graded.append(g)
    return Report(str(submission), graded, isolated=True, isolation="isolation: fake", hidden_seed=seed or 1)


def fake_kind(message: str) -> str:
    """The kind the real judge names for such a message (this fake judge has only the words)."""
    for words, kind in (("does not import", "import"), ("did not finish within", "hang"),
                        ("the sandbox process running your code", "crash")):
        if words in message:
            return kind
    return "wrong"


def fake_mistakes(message: str, number: int) -> tuple:
    """The mistakes the real judge names for such a message (core/results/verdicts.py: the phrases of
    its stage in its English words)."""
    return tuple(dict.fromkeys(ident for n, phrase, ident in PHRASES if n == number and phrase in message))


def counting():
    calls = []
    return calls, lambda *a, **k: fake_grade(*a, **k, calls=calls)


def student(klass: Path, name: str, **stages: str) -> Path:
    """A student folder; stages as s1="PASS", s2="<a failure message>" (absent: no file)."""
    for key, text in stages.items():
        path = klass / name / stage(int(key[1:])).source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    (klass / name).mkdir(parents=True, exist_ok=True)
    return klass / name


@pytest.fixture
def klass(tmp_path):
    k = tmp_path / "class"
    student(k, "ada", s1="PASS", s2="PASS")
    student(k, "bob", s1="PASS", s2="swapped the partials: a.grad is 3.0")
    student(k, "=cmd", s1="not yet")
    student(k, "山田太郎", s1="PASS", s2="PASS")
    student(k, "zed", s1="expected the float 0.0", s2="PASS")
    (k / ".git").mkdir()
    return k


def grade_with(klass, out, grade_one, **options):
    return course.grade_class(klass, ROOT, out, TWO, grade_one=grade_one, workers=options.pop("workers", 1),
                              **options)


CSV = ["student,stage1,stage2,total,max,folder", "'=cmd,0,0,0,25,%3Dcmd", "ada,10,15,25,25,ada",
       "bob,10,0,10,25,bob", "zed,0,15,15,25,zed", "山田太郎,10,15,25,25,山田太郎"]


def test_the_csv_has_a_bom_every_student_in_order_and_no_formula(klass, tmp_path):
    out = tmp_path / "g" / "grades.csv"
    grade_with(klass, out, fake_grade)
    data = out.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf"), "UTF-8 with a byte-order mark: Excel then reads Japanese names"
    assert data[3:].decode("utf-8").splitlines() == CSV


def test_every_students_report_is_written_next_to_the_csv(klass, tmp_path):
    out = tmp_path / "grades.csv"
    grade_with(klass, out, fake_grade)
    folder = tmp_path / "grades.reports"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"{n}.{ext}" for n in ("%3Dcmd", "ada", "bob", "zed", "山田太郎") for ext in ("json", "txt"))  # folder_key
    data = json.loads((folder / "bob.json").read_text(encoding="utf-8"))
    assert data["score"] == 10 and data["hidden_seed"] == 1
    assert data["course"]["status"] == {"1": "passed", "2": "failed"}
    assert data["course"]["mistakes"] == {"2": ["swapped the partials"]}
    text = (folder / "bob.txt").read_text(encoding="utf-8")
    assert "swapped the partials" in text and text.splitlines()[-2].split() == ["total", "10/25"]


def test_an_interrupted_run_resumed_gives_the_same_csv_and_grades_only_who_is_left(klass, tmp_path):
    whole = tmp_path / "whole.csv"
    grade_with(klass, whole, fake_grade)
    out = tmp_path / "resumed.csv"
    done = []

    def dies_on_the_third(*a, **k):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(Path(a[0]).name)
        return fake_grade(*a, **k)

    with pytest.raises(KeyboardInterrupt):
        grade_with(klass, out, dies_on_the_third)
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert len(rows) == 1 + 2, "the CSV holds the two students done, written as each finished"
    calls, counted = counting()
    grade_with(klass, out, counted)
    assert sorted(calls) == sorted({"=cmd", "ada", "bob", "zed", "山田太郎"} - set(done))
    assert out.read_bytes() == whole.read_bytes()
    assert class_outputs.summary_path(out).read_text() == class_outputs.summary_path(whole).read_text()


def test_a_rerun_skips_the_unchanged_regrades_the_changed_and_force_regrades_all(klass, tmp_path):
    out = tmp_path / "grades.csv"
    grade_with(klass, out, fake_grade)
    calls, counted = counting()
    grade_with(klass, out, counted)
    assert calls == [], "nothing changed: nobody is graded again"
    student(klass, "bob", s2="PASS")
    grade_with(klass, out, counted)
    assert calls == ["bob"] and "bob,10,15,25,25,bob" in out.read_text(encoding="utf-8-sig").splitlines()
    calls.clear()
    grade_with(klass, out, counted, force=True)
    assert sorted(calls) == sorted(["=cmd", "ada", "bob", "zed", "山田太郎"])


def test_changed_tests_regrade_everyone(klass, tmp_path, monkeypatch):
    out = tmp_path / "grades.csv"
    grade_with(klass, out, fake_grade)
    monkeypatch.setattr(course, "tests_hash", lambda root: "other tests")
    calls, counted = counting()
    grade_with(klass, out, counted)
    assert len(calls) == 5


def test_one_student_is_regraded_into_the_existing_csv(klass, tmp_path, capsys):
    out = tmp_path / "grades.csv"
    grade_with(klass, out, fake_grade)
    student(klass, "zed", s1="PASS")
    student(klass, "ada", s2="not yet")  # changed too, but not asked for: kept as graded
    calls, counted = counting()
    grade_with(klass, out, counted, only="zed")
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert calls == ["zed"] and "zed,10,15,25,25,zed" in rows and "ada,10,15,25,25,ada" in rows and len(rows) == 6
    with pytest.raises(Refusal, match="no student folder 'nobody'"):
        grade_with(klass, out, counted, only="nobody")
    from autograd_kata import cli
    assert cli.main(["grade", "--class", str(klass), "--student", "zed", "--out", str(tmp_path / "none.csv")]) == 2
    assert "--student regrades one student into an existing CSV" in capsys.readouterr().err


def test_a_seed_is_passed_on_and_the_reports_are_written_without_timings(klass, tmp_path):
    seeds = []

    def keeps(*a, **k):
        seeds.append(k["seed"])
        r = fake_grade(*a, **k)
        r.seconds = 3.25
        return r

    out = tmp_path / "a.csv"
    grade_with(klass, out, keeps, seed=42)
    assert set(seeds) == {42}
    first = {p.name: p.read_bytes() for p in class_outputs.reports_dir(out).iterdir()}
    assert "graded in" not in (class_outputs.reports_dir(out) / "ada.txt").read_text()
    assert json.loads((class_outputs.reports_dir(out) / "ada.json").read_text())["seconds"] is None
    grade_with(klass, out, keeps, seed=42, force=True)
    assert {p.name: p.read_bytes() for p in class_outputs.reports_dir(out).iterdir()} == first
    calls, counted = counting()
    grade_with(klass, out, counted, seed=7)
    assert len(calls) == 5, "another seed is another grading"


# --- shards -----------------------------------------------------------------------------

def test_a_shard_is_a_stable_share_of_the_names():
    names = [f"student{i:03d}" for i in range(200)]
    shards = [{n for n in names if roster.in_shard(n, (k, 4))} for k in range(1, 5)]
    assert set().union(*shards) == set(names) and sum(map(len, shards)) == 200, "each name in exactly one"
    assert all(30 <= len(s) <= 70 for s in shards), [len(s) for s in shards]
    assert {n for n in names[:50] if roster.in_shard(n, (2, 4))} == shards[1] & set(names[:50]), \
        "who else is in the class does not move anyone"


@pytest.mark.parametrize("text, env, want", [
    ("2/3", {}, (2, 3)), ("3", {"JOB_COMPLETION_INDEX": "0"}, (1, 3)), ("3", {"JOB_COMPLETION_INDEX": "2"}, (3, 3)),
    ("4", {"KATA_SHARD_INDEX": "4"}, (4, 4)), ("1/2", {"JOB_COMPLETION_INDEX": "1"}, (1, 2)), (None, {}, None)])
def test_the_shard_comes_from_the_argument_or_the_engine(text, env, want):
    assert roster.parse_shard(text, env) == want


@pytest.mark.parametrize("text, env", [("3/2", {}), ("0/2", {}), ("a/b", {}), ("2", {}),
                                       ("2", {"JOB_COMPLETION_INDEX": "2"})])
def test_a_wrong_shard_is_refused_in_one_line(text, env):
    with pytest.raises(Refusal) as refused:
        roster.parse_shard(text, env)
    assert "\n" not in refused.value.line()


def test_shards_merged_equal_the_unsharded_run(klass, tmp_path, capsys):
    for i in range(12):
        student(klass, f"s{i:02d}", s1="PASS" if i % 3 else "store float(data)", s2="PASS" if i % 2 else "uphill")
    whole = tmp_path / "whole.csv"
    grade_with(klass, whole, fake_grade)
    parts = []
    for k in (1, 2):
        parts.append(tmp_path / f"shard{k}" / "grades.csv")
        grade_with(klass, parts[-1], fake_grade, shard=(k, 2))
    assert all(len(p.read_text(encoding="utf-8-sig").splitlines()) > 2 for p in parts)
    merged = tmp_path / "all.csv"
    from autograd_kata import cli
    assert cli.main(["grade", "--merge", *map(str, parts), "--out", str(merged)]) == 0
    assert merged.read_bytes() == whole.read_bytes()
    assert class_outputs.summary_path(merged).read_text() == class_outputs.summary_path(whole).read_text()
    assert capsys.readouterr().out.startswith(class_outputs.summary_path(whole).read_text())
    assert sorted(p.name for p in class_outputs.reports_dir(merged).iterdir()) == \
        sorted(p.name for p in class_outputs.reports_dir(whole).iterdir())
    with pytest.raises(Refusal, match="is in"):
        class_outputs.merge([parts[0], parts[0]], tmp_path / "twice.csv")
    (class_outputs.reports_dir(parts[1]) / "ada.json").unlink(missing_ok=True)
    (class_outputs.reports_dir(parts[1]) / "bob.json").unlink(missing_ok=True)
    (class_outputs.reports_dir(parts[0]) / "ada.json").unlink(missing_ok=True)
    (class_outputs.reports_dir(parts[0]) / "bob.json").unlink(missing_ok=True)
    with pytest.raises(Refusal, match="no report for"):
        class_outputs.merge(parts, tmp_path / "lost.csv")
    assert cli.main(["grade", "--merge", str(parts[0])]) == 2  # no --out
    assert "--merge needs --out" in capsys.readouterr().err


# --- the summary ----------------------------------------------------------------------------

def test_the_summary_says_each_stages_students_by_status_and_names_mistakes_only_where_written(tmp_path):
    k = tmp_path / "class"
    student(k, "ada", s1="PASS", s6="PASS")
    student(k, "bob", s1=stub(1), s6=stub(6))   # never started: stage 6's stub is the naive = code
    student(k, "cy", s1="expected the float 0.0", s6="a.grad is 3.0: the add rule assigns (=) instead of adding (+=)")
    student(k, "dee", s1="exercises/stage01_value.py does not import (line 1): SyntaxError: invalid syntax",
            s6="importing exercises/stage06_accumulate.py did not finish within 6 s - an infinite loop?")
    student(k, "eve", s1="the sandbox process running your code exited (status 3) (os._exit? a crash?)")

    def grade_stub_as_failing(submission, *a, **kw):
        report = fake_grade(submission, *a, **kw)
        for g in report.stages:  # a stub's first line is code: say what the real stub says, every mistake
            if g.source and (Path(submission) / g.source).read_text() == stub(g.stage.number) + "\n":
                said = " / ".join(p for s, p, _ in PHRASES if s == g.stage.number) or "not written yet"
                g.tests = [Result("t::a", "failed", said, kind="unwritten")]
                g.problem = "1 of 1 tests did not pass; first: a: " + said
        return report

    out = tmp_path / "g.csv"
    course.grade_class(k, ROOT, out, (stage(1), stage(6)), grade_one=grade_stub_as_failing, workers=2)
    summary = class_outputs.summary_path(out).read_text(encoding="utf-8")
    assert summary == "\n".join([
        "kata grade --class: 5 students, stages 1, 6",
        "",
        "stage 1 (Value skeleton): 1/5 passed (20%)",
        "  passed (1): ada",
        "  failed (1): cy",
        "  not started (the untouched stub) (1): bob",
        "  does not import (1): dee",
        "  crashes (1): eve",
        "stage 6 (accumulate with +=): 1/5 passed (20%)",
        "  passed (1): ada",
        "  failed (1): cy",
        "  not started (the untouched stub) (1): bob",
        "  hangs (1): dee",
        "  no file for this stage (1): eve",
        "",
        "classic mistakes named by the failures (students):",
        f"  stage 1: {label(1, 'expected the float 0.0')} -- 1: cy",
        f"  stage 6: {label(6, 'the add rule assigns (=) instead of adding (+=)')} -- 1: cy",
    ]) + "\n", summary
    names = ("ada", "bob", "cy", "dee", "eve")
    ja = class_outputs.class_summary([class_outputs.load_record(class_outputs.reports_dir(out), n) for n in names],
                              (stage(1), stage(6)), "ja")
    assert ja.splitlines()[0] == "kata grade --class: 学生 5 人、ステージ 1, 6"
    assert "  未着手（配布したスタブのまま）（1 人）: bob" in ja.splitlines()
    assert f"  ステージ 1: {label(1, 'expected the float 0.0', 'ja')} -- 1 人: cy" in ja.splitlines()


def test_a_named_classic_mistake_is_that_mistake_in_the_summary_never_a_crash(tmp_path):
    """Stage 8: the SGD step climbs (a wrong value naming the mistake) and a later test crashes on
    the overflow it causes: the student is filed under "failed" with the mistake, not "crashes".
    Stage 7's tests naming stage 5's visited list put that mistake in the summary, under stage 5."""
    from autograd_kata.classroom.course.records import record
    climbs = StageGrade(stage(8), source="exercises/stage08_mlp.py", problem="1 of 2 tests did not pass")
    climbs.tests = [Result("tests/test_stage08_mlp.py::test_step", "failed", "uphill", "wrong", mistakes=["climbs"]),
                    Result("tests/test_stage08_mlp.py::test_train", "failed", "OverflowError", "crash")]
    visits = StageGrade(stage(7), source="exercises/stage07_zero_grad.py", problem="1 of 1 tests did not pass")
    visits.tests = [Result("tests/test_stage07_zero_grad.py::test_big", "failed", "each node once", "wrong",
                           mistakes=["no-visited"])]
    report = Report("ada", [visits, climbs], isolated=True)
    course = record("ada", report, tmp_path, (stage(7), stage(8)), "f", "t", {}, None)
    assert course["status"] == {"7": "failed", "8": "failed"}
    assert course["mistakes"] == {"5": ["each node once"], "8": ["uphill"]}
    summary = class_outputs.class_summary([course], (stage(7), stage(8)))
    assert "crashes" not in summary
    assert f"stage 8: {label(8, 'uphill')} -- 1: ada" in summary and f"stage 5: {label(5, 'each node once')}" in summary


def test_a_label_is_true_of_every_mistake_that_gives_its_phrase():
    """Two catalogued mistakes with one phrase get one label: it may not be the words of only one
    of them (stage 7's 'resets every parameter but the last' was a student's who zeroed only the last)."""
    from autograd_kata.maintainer.mistakes import MISTAKES

    by_phrase = {}
    for m in MISTAKES:
        by_phrase.setdefault((m.stage, m.phrase), []).append(m)
    shared = {key: ms for key, ms in by_phrase.items() if len(ms) > 1}
    assert (7, "zero_grad() must reset every parameter") in shared
    for (n, phrase), ms in shared.items():
        words = label(n, phrase)
        assert all(words != m.says for m in ms), f"stage {n} {phrase!r}: the label is only {words!r}"
    assert "but the last" not in label(7, "zero_grad() must reset every parameter")
    assert {(n, p) for n, p, _ in PHRASES} == set(by_phrase)


# --- through the judge --------------------------------------------------------------------------

def test_a_real_class(tmp_path):
    """Six submissions graded through the judge, stages 1 and 6: the CSV, the summary's exact
    lines, a report per student."""
    from autograd_kata.core.build import strip_markers
    from autograd_kata.maintainer.mistakes import MISTAKES

    def mistake(mid):
        m = next(m for m in MISTAKES if m.id == mid)
        source = (ROOT / stage(m.stage).source("solutions")).read_text(encoding="utf-8")
        assert source.count(m.old) == 1, mid
        return strip_markers(source.replace(m.old, m.new))

    k = tmp_path / "class"
    files = {"ada": {1: reference(1), 6: reference(6)},
             "bob": {1: stub(1), 6: stub(6)},
             "cy": {1: mistake("grad-starts-as-int"), 6: mistake("add-rule-assigns")},
             "dee": {1: "class Value(:\n", 6: "while True:\n    pass\n"},
             "eve": {1: reference(1).replace("self.grad = 0.0 ", "import os; os._exit(3); self.grad = 0.0 ", 1)},
             "山田": {1: reference(1), 6: mistake("mul-rule-assigns")}}
    for name, stages in files.items():
        for n, text in stages.items():
            path = k / name / stage(n).source("exercises")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    out = tmp_path / "grades.csv"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--class", str(k), "--stage", "1", "--stage", "6",
                "--stage-timeout", "20", "--out", str(out)], cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_text(encoding="utf-8-sig").splitlines() == [
        "student,stage1,stage6,total,max,folder", "ada,10,10,20,20,ada", "bob,0,0,0,20,bob", "cy,0,0,0,20,cy",
        "dee,0,0,0,20,dee", "eve,0,0,0,20,eve", "山田,10,0,10,20,山田"]
    summary = class_outputs.summary_path(out).read_text(encoding="utf-8")
    lines = [line for line in summary.splitlines() if not line.startswith("isolation")]
    assert lines == [
        "kata grade --class: 6 students, stages 1, 6",
        "",
        "stage 1 (Value skeleton): 2/6 passed (33%)",
        "  passed (2): ada, 山田",
        "  failed (1): cy",
        "  not started (the untouched stub) (1): bob",
        "  does not import (1): dee",
        "  crashes (1): eve",
        "stage 6 (accumulate with +=): 1/6 passed (17%)",
        "  passed (1): ada",
        "  failed (2): cy, 山田",
        "  not started (the untouched stub) (1): bob",
        "  hangs (1): dee",
        "  no file for this stage (1): eve",
        "",
        "classic mistakes named by the failures (students):",
        f"  stage 1: {label(1, 'expected the float 0.0')} -- 1: cy",
        f"  stage 6: {label(6, 'the add rule assigns (=) instead of adding (+=)')} -- 1: cy",
        f"  stage 6: {label(6, 'the mul rule assigns (=) instead of adding (+=)')} -- 1: 山田",
    ], summary
    reports = class_outputs.reports_dir(out)
    for name in files:
        data = json.loads((reports / f"{name}.json").read_text(encoding="utf-8"))
        assert isinstance(data["hidden_seed"], int) and data["course"]["student"] == name
        assert (reports / f"{name}.txt").read_text(encoding="utf-8").splitlines()[0]
    again = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--class", str(k), "--stage", "1", "--stage", "6",
                 "--out", str(out)], cwd=ROOT, timeout=120)
    assert again.returncode == 0 and again.stdout.count("(unchanged, kept)") == 6, again.stdout + again.stderr


def test_a_seed_reproduces_a_report_byte_for_byte(tmp_path):
    folder = tmp_path / "sub"
    (folder / "exercises").mkdir(parents=True)
    (folder / stage(2).source("exercises")).write_text(reference(2), encoding="utf-8")
    (folder / stage(1).source("exercises")).write_text(reference(1).replace("self.grad = 0.0 ", "self.grad = 0 "),
                                                       encoding="utf-8")
    outs = []
    for i in range(2):
        outs.append(tmp_path / f"r{i}.json")
        proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--submission", str(folder), "--stage", "1",
                    "--stage", "2", "--seed", "130", "--format", "json", "--out", str(outs[-1])], cwd=ROOT)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "graded in" not in proc.stdout
    assert outs[0].read_bytes() == outs[1].read_bytes()
    data = json.loads(outs[0].read_text())
    assert data["hidden_seed"] == 130 and data["score"] == 15
    gradescope = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--submission", str(folder), "--stage", "1",
                      "--seed", "130", "--format", "gradescope"], cwd=ROOT)
    shown = gradescope.stdout.replace(str(folder), "SUBMISSION")
    assert "130" not in shown and "seed" not in shown, "the student never sees the seed"


# --- README: Kubernetes and GitHub Actions ------------------------------------------------------------

def readme_yaml(marker: str) -> dict:
    text = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    found = [yaml.safe_load(b) for b in blocks if marker in b]
    assert len(found) == 1, f"README has {len(found)} yaml blocks with {marker!r}"
    return found[0]


def test_the_readmes_kubernetes_indexed_job_shards_the_class():
    job = readme_yaml("kind: Job")
    assert job["apiVersion"] == "batch/v1" and job["kind"] == "Job"
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert isinstance(spec["completions"], int) and isinstance(spec["parallelism"], int)
    assert 1 <= spec["parallelism"] <= spec["completions"]
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] in ("Never", "OnFailure")
    (container,) = pod["containers"]
    command = " ".join(map(str, container.get("command", []) + container.get("args", [])))
    assert re.search(rf"kata grade --class \S+ --shard {spec['completions']}(\s|$)", command), command
    assert "{k}" in command, "each index writes its own CSV"
    assert roster.parse_shard(str(spec["completions"]), {"JOB_COMPLETION_INDEX": "0"}) == (1, spec["completions"])


def test_the_readmes_actions_matrix_shards_then_merges():
    workflow = readme_yaml("strategy:")
    jobs = workflow["jobs"]
    grading = next(j for j in jobs.values() if "strategy" in j)
    shards = grading["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, len(shards) + 1))
    run_lines = " ".join(step.get("run", "") for step in grading["steps"])
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in run_lines, run_lines
    merging = next(j for j in jobs.values() if "strategy" not in j)
    need = merging["needs"]
    assert need == next(name for name, j in jobs.items() if j is grading) or need == [next(
        name for name, j in jobs.items() if j is grading)]
    assert "kata grade --merge" in " ".join(step.get("run", "") for step in merging["steps"])
    assert workflow.get("on") or workflow.get(True), "a trigger"


def test_the_docs_indexed_job_and_matrix_run_with_empty_shards(tmp_path):
    """One student, 8 shards (and 4): most shards are empty, and an empty shard succeeds with a CSV
    of its header only, so no pod is retried and the matrix's merge runs, and merges."""
    clones = tmp_path / "clones"
    (clones / "ada" / "exercises").mkdir(parents=True)
    (clones / "ada" / stage(1).source("exercises")).write_text(reference(1), encoding="utf-8")
    kata = [sys.executable, "-m", "autograd_kata.instructor"]
    header = "student,stage1,total,max,folder"  # graded on stage 1 alone, to be quick
    container = readme_yaml("kind: Job")["spec"]["template"]["spec"]["containers"][0]
    command = [str(a).replace("/work/clones", str(clones)).replace("/work/out", str(tmp_path / "out"))
               for a in container["command"]]
    assert command[0] == "kata"
    n = int(command[command.index("--shard") + 1])
    for index in range(n):
        proc = run(kata + command[1:] + ["--stage", "1"], cwd=ROOT, env={"JOB_COMPLETION_INDEX": str(index)})
        assert proc.returncode == 0, (index, proc.stdout, proc.stderr)
    csvs = sorted((tmp_path / "out").glob("grades-*-of-8.csv"))
    assert len(csvs) == n
    rows = [c.read_text(encoding="utf-8-sig").splitlines() for c in csvs]
    assert sorted(rows) == [[header]] * (n - 1) + [[header, "ada,10,10,10,ada"]], "every other shard: its header alone"
    workflow = readme_yaml("strategy:")["jobs"]
    shards = workflow["shard"]["strategy"]["matrix"]["shard"]
    line = next(step["run"] for step in workflow["shard"]["steps"] if "--shard" in step.get("run", ""))
    checkout = tmp_path / "checkout"  # the workflow's, with the class in clones/
    (checkout / "clones").mkdir(parents=True)
    (clones / "ada").rename(checkout / "clones" / "ada")
    for k in shards:
        args = line.replace('sudo "$(which kata)"', "").replace("${{ matrix.shard }}", str(k)).split()
        proc = run(kata + args + ["--stage", "1", "--tests-from", str(ROOT)], cwd=checkout)  # the checkout's tests
        assert proc.returncode == 0, (k, proc.stdout, proc.stderr)
    merge = next(step["run"] for step in workflow["merge"]["steps"] if "--merge" in step.get("run", ""))
    proc = run(["bash", "-c", merge.replace("kata ", " ".join(kata) + " ", 1)], cwd=checkout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (checkout / "grades.csv").read_text(encoding="utf-8-sig").splitlines()[1:] == ["ada,10,10,10,ada"]


def test_a_student_named_like_an_option_is_regraded_by_name(tmp_path):
    """``--student -m17``: a folder name that starts with a dash is still the option's value."""
    klass = tmp_path / "class"
    for name in ("-m17", "ada"):
        (klass / name / "exercises").mkdir(parents=True)
        (klass / name / stage(1).source("exercises")).write_text(reference(1), encoding="utf-8")
    out = tmp_path / "grades.csv"
    kata = [sys.executable, "-m", "autograd_kata.instructor", "grade", "--class", str(klass), "--out", str(out),
            "--stage", "1"]
    assert run(kata, cwd=ROOT).returncode == 0
    proc = run(kata + ["--student", "-m17"], cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.startswith("-m17: 10/10"), proc.stdout + proc.stderr


def test_a_misnamed_stage_file_is_named_in_the_reason(tmp_path):
    """A re-downloaded ``stage01_value (1).py`` is not graded (the rule is the exact name), and the
    reason says which file was seen and what to call it."""
    from autograd_kata.classroom.grading.grade import grade
    (tmp_path / "ada" / "exercises").mkdir(parents=True)
    (tmp_path / "ada" / "exercises" / "stage01_value (1).py").write_text(reference(1), encoding="utf-8")
    report = grade(tmp_path / "ada", ROOT, [stage(1)], jobs=1)
    (g,) = report.stages
    assert g.score == 0 and g.graded and not g.source
    assert g.problem == ("no exercises/stage01_value.py in the submission; found exercises/stage01_value (1).py, "
                         "which is not graded: rename it stage01_value.py"), g.problem



@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_class_summary_names_each_misnamed_file_and_the_name_to_give_it(tmp_path, lang):
    """Re-downloads and renames (``stage04_tanh (1).py``, ``stage04_tanh.py.txt``, ``Stage04_Tanh.py``),
    graded as a class: not graded (the rule is the exact name), and both the student's report and
    the class summary name the file seen and the name to give it, in the language asked; a rerun
    sees a file renamed so too (the summary never keeps a stale list)."""
    from autograd_kata.core.i18n import t_in
    tanh = stage(4)
    klass, out = tmp_path / "class", tmp_path / "grades.csv"
    seen = {"ada": "stage04_tanh (1).py", "bob": "stage04_tanh.py.txt", "cy": "Stage04_Tanh.py"}
    for name, file in seen.items():
        (klass / name / "exercises").mkdir(parents=True)
        (klass / name / "exercises" / file).write_text(reference(4), encoding="utf-8")
    (klass / "dee").mkdir()  # nothing at all: no file, and nothing to rename
    course.grade_class(klass, ROOT, out, (tanh,), workers=1, lang=lang)
    for name, file in seen.items():
        text = (class_outputs.reports_dir(out) / f"{name}.txt").read_text(encoding="utf-8")
        assert t_in(lang, "report.reason.no_file_but", file=tanh.source("exercises"), found=f"exercises/{file}",
                    name="stage04_tanh.py") in text, text
    summary = class_outputs.summary_path(out).read_text(encoding="utf-8")
    who = ", ".join(t_in(lang, "summary.misnamed_who", name=name, files=f"exercises/{file}")
                    for name, file in seen.items())
    assert t_in(lang, "summary.status_line", status=t_in(lang, "summary.status.misnamed", name="stage04_tanh.py"),
                count=3, names=who) in summary.splitlines(), summary
    assert t_in(lang, "summary.status_line", status=t_in(lang, "summary.status.no_file"), count=1,
                names="dee") in summary.splitlines(), summary
    (klass / "dee" / "stage04_tanh(2).py").write_text(reference(4), encoding="utf-8")
    course.grade_class(klass, ROOT, out, (tanh,), workers=1, lang=lang)  # a rerun: dee's new file is seen
    summary = class_outputs.summary_path(out).read_text(encoding="utf-8")
    assert t_in(lang, "summary.misnamed_who", name="dee", files="stage04_tanh(2).py") in summary, summary
    assert t_in(lang, "summary.status.no_file") not in summary, summary

# --- Classroom 50 -----------------------------------------------------------------------------------

def test_the_classroom50_autograder_writes_the_result_json_classroom50_documents(tmp_path):
    """`kata autograder --classroom50 DIR`: autograder.py beside the grader's files (no reference code);
    run as Classroom 50's runner does (the student's checkout as working directory, its environment
    variables), it writes ./result.json to the contract of Classroom 50's wiki (Advanced Autograding,
    "The result.json contract") and ./release-body.md, and exits 0."""
    folder = tmp_path / "cs" / "autograders" / "kata"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "autograder", "--classroom50", str(folder)], cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (folder / "autograder.py").is_file() and (folder / "tests" / "conftest.py").is_file()
    assert (folder / "autograd_kata" / "classroom" / "grading" / "grade.py").is_file()
    assert not (folder / "solutions").exists() and not (folder / "autograd_kata" / "maintainer").exists()
    again = run([sys.executable, "-m", "autograd_kata.cli", "autograder", "--classroom50", str(folder)], cwd=ROOT)
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr

    checkout = tmp_path / "student"
    (checkout / "exercises").mkdir(parents=True)
    (checkout / stage(1).source("exercises")).write_text(reference(1), encoding="utf-8")
    (checkout / "tests").mkdir()  # a student's own "tests" grade nothing
    breakout = checkout / "x```\n## full marks\n```" / stage(2).source("exercises").split("/")[1]
    breakout.parent.mkdir()  # a path that would close the release body's code block and add a heading
    breakout.write_text(stub(2), encoding="utf-8")
    (checkout / "tests" / "test_stage02_add_mul.py").write_text("def test_ok():\n    pass\n")
    env = {"KATA_PYTHON": sys.executable, "CLASSROOM": "ml-101", "ASSIGNMENT": "kata", "OWNER": "ada",
           "SUBMISSION_TAG": "submit/2026-12-01T10-00-00Z-abc1234", "COMMIT_URL": "https://github.com/o/r/commit/abc",
           "RELEASE_URL": "https://github.com/o/r/releases/tag/submit%2Fx", "REVIEW_URL": ""}
    done = run([sys.executable, str(folder / "autograder.py")], cwd=checkout, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((checkout / "result.json").read_text(encoding="utf-8"))
    assert result["schema"] == "classroom50/result/v1"
    for key in ("classroom", "assignment", "submission", "commit", "release", "review", "datetime", "graded_at"):
        assert isinstance(result[key], str), key
    assert (result["classroom"], result["assignment"], result["submission"]) == (
        "ml-101", "kata", "submit/2026-12-01T10-00-00Z-abc1234")
    assert result["review"] == env["COMMIT_URL"], "review falls back to the commit, as the template does"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result["datetime"])
    tests = result["tests"]
    assert [t["test-name"] for t in tests] == [f"Stage {s.number}: {s.title}" for s in STAGES]
    for t in tests:
        assert isinstance(t["passed"], bool) and type(t["score"]) is int and type(t["max-score"]) is int
    first, total = STAGES[0].points, sum(s.points for s in STAGES)  # stage 1 solved, the others stubs
    assert result["score"] == sum(t["score"] for t in tests) == first
    assert result["max-score"] == sum(t["max-score"] for t in tests) == total
    assert [t["passed"] for t in tests] == [s is STAGES[0] for s in STAGES]
    body = (checkout / "release-body.md").read_text(encoding="utf-8")
    assert body.startswith(f"## kata grade\n\n**{first}/{total}**") and "hidden_seed" not in body
    lines = body.splitlines()
    fence = lines[4]
    assert re.fullmatch("````+", fence) and lines[-1] == fence, "a fence longer than the path's ```"
    assert all(fence not in line for line in lines[5:-1]) and "x```\\x0a## full marks" in body
    assert [line for line in lines if line.startswith("#")] == ["## kata grade"], "no heading breaks out"
    assert "seed" not in json.dumps(result)


# --- --lang ja for every report format ----------------------------------------------------------------

def a_report() -> Report:
    one = StageGrade(stage(1), tests=[Result(f"{stage(1).test_file}::test_a", "passed")],
                     source=stage(1).source("exercises"), found=[stage(1).source("exercises")], seconds=1.5)
    two = StageGrade(stage(2), tests=[Result(f"{stage(2).test_file}::test_b", "failed", "swapped the partials")],
                     problem="1 of 1 tests did not pass; first: test_b: swapped the partials",
                     source=stage(2).source("exercises"), found=[stage(2).source("exercises")])
    return Report("/sub", [one, two], seconds=2.0, isolated=True, isolation="isolation: as kata-sandbox",
                  hidden_seed=99)


def test_every_report_format_speaks_the_language_asked_and_english_by_default():
    from autograd_kata.classroom.grading.formats import FORMATS, POLICY, render
    from autograd_kata.core.i18n import t_in

    assert t_in("en", "report.policy_text") == POLICY
    report = a_report()
    en = {fmt: render(report, fmt) for fmt in FORMATS}
    ja = {fmt: render(report, fmt, "ja") for fmt in FORMATS}
    assert en["text"].splitlines()[:3] == ["kata grade: /sub", "isolation: as kata-sandbox", f"policy: {POLICY}"]
    assert "1     Value skeleton" in en["text"] and en["text"].splitlines()[-1] == "graded in 2.0 s"
    text = ja["text"].splitlines()
    assert text[0] == "採点した提出物: /sub" and text[2].startswith("採点方針: ステージごとに全部か無か")
    assert re.search(rf"^1 +{re.escape(t_in('ja', 'title.stage1'))}", ja["text"], re.M)
    assert text[-1] == "採点時間 2.0 秒"
    assert any(line.startswith("合計") and line.endswith("10/25") for line in text)
    scope = json.loads(ja["gradescope"])
    assert [t["name"] for t in scope["tests"]] == [f"ステージ {n}: {t_in('ja', f'title.stage{n}')}" for n in (1, 2)]
    assert scope["tests"][1]["output"].startswith("1 個中 0 個のテストが通りました。")
    assert "25 点中 10 点" in scope["output"] and "seed" not in ja["gradescope"] + en["gradescope"]
    assert f'name="title" value="{t_in("ja", "title.stage2")}"' in ja["junit"]
    assert json.loads(ja["json"]) == json.loads(en["json"]), "JSON is data: the same in every language"
    assert json.loads(en["json"])["hidden_seed"] == 99, "the instructor's JSON records the seed"
    assert "99" not in en["junit"] + en["text"], "no seed where a student may read"


def test_kata_autograder_lang_ja_gives_gradescope_feedback_in_japanese(tmp_path):
    import zipfile

    proc = run([sys.executable, "-m", "autograd_kata.cli", "autograder", str(tmp_path / "ag.zip"), "--lang", "ja"],
               cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with zipfile.ZipFile(tmp_path / "ag.zip") as zf:
        script = zf.read("run_autograder").decode()
    assert "--format gradescope --lang ja" in script
    proc = run([sys.executable, "-m", "autograd_kata.cli", "autograder", str(tmp_path / "en.zip")], cwd=ROOT,
               env={"KATA_LANG": "en"})
    with zipfile.ZipFile(tmp_path / "en.zip") as zf:
        assert "--format gradescope --lang en" in zf.read("run_autograder").decode()
