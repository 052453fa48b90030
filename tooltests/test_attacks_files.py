"""One student's files stay that student's: a class run, and a single grading, tried with
files no grader should read and names no output should trust (issue 26).

A submission is anyone's folder: a file name that is not UTF-8, the stage file a link to
``/dev/zero`` or a FIFO, a folder 1,100 levels deep, 20,000 decoy files, a name with a
newline, a terminal escape, a Markdown fence, a backslash or a leading ``'``.  Each is
graded here beside honest classmates: the classmates keep their full marks, the run
completes (and a rerun keeps everyone), the attacker gets a stated reason or the marks
their honest file earns, and every output stays one line per student, one file per
student, printable and within its documented size.  The grader's own code decides all of
it (no jail is involved), so these run in any set-up.
"""
from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from test_course import counting, fake_grade

from autograd_kata.classroom.course import outputs as class_outputs
from autograd_kata.classroom.course import run as course
from autograd_kata.classroom.grading import discovery
from autograd_kata.classroom.grading.folders import prepare_stage
from autograd_kata.classroom.grading.formats import FORMATS, render
from autograd_kata.classroom.grading.report import MAX_FOUND, MAX_STAGE_MESSAGES, MAX_STAGE_REPORT, Report, fill
from autograd_kata.core.manifest import STAGES, stage
from kit import reference, run, stub

pytestmark = pytest.mark.timeout(600)

ROOT = Path(__file__).resolve().parent.parent
UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
STAGE1 = stage(1).source("exercises")
MODULES = [f"{one.module}.py" for one in STAGES]


def put(folder: Path, rel: str, text: str) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def deep(folder: Path, levels: int) -> None:
    """``levels`` nested folders, made relative to each other (a path that long is past PATH_MAX)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open(STAGE1.rsplit("/", 1)[1], os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as f:
            f.write(stub(1))
    finally:
        os.close(fd)


def undeep(folder: Path) -> None:
    """Remove what ``deep`` made, a level at a time (``shutil.rmtree`` recurses: RecursionError)."""
    top = folder / "d"
    while top.is_dir() and not top.is_symlink():
        inner = top / "d"
        if inner.is_dir():
            inner.rename(folder / "d-next")
        for path in top.iterdir():
            path.unlink()
        top.rmdir()
        if (folder / "d-next").is_dir():
            (folder / "d-next").rename(top)


def decoys(folder: Path, files: int, names=MODULES) -> None:
    """``files`` decoy candidate files: a folder for each ``len(names)``, every name in each."""
    for i in range(files // len(names)):
        for name in names:
            put(folder, f"d{i:05d}/{name}", "")


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """A class of honest students and attackers, graded for real (stage 1) through the CLI."""
    tmp = tmp_path_factory.mktemp("attacked")
    k = tmp / "class"
    for name in ("ada", "bob"):
        put(k / name, STAGE1, reference(1))
    dee = k / "dee"  # a file name that is not UTF-8 (git keeps it) beside the real file
    put(dee, STAGE1, reference(1))
    put(dee / os.fsdecode(b"old\xff"), "stage01_value.py", stub(1))
    (k / "eve" / "exercises").mkdir(parents=True)
    (k / "eve" / STAGE1).symlink_to("/dev/zero")  # read to the end: the grader's memory
    (k / "fay" / "exercises").mkdir(parents=True)
    os.mkfifo(k / "fay" / STAGE1)  # read: the grader waits forever
    put(k / "gus", STAGE1, reference(1))
    deep(k / "gus", 1100)  # os.walk: RecursionError
    put(k / "hal", STAGE1, reference(1))
    decoys(k / "hal", 20_000)
    put(k / os.fsdecode(b"ivy\xff"), STAGE1, reference(1))  # the student's folder itself
    out = tmp / "grades.csv"
    try:
        proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--class", str(k), "--stage", "1",
                    "--stage-timeout", "30", "--out", str(out)], cwd=ROOT, timeout=500)
        yield k, out, proc
    finally:
        undeep(k / "gus")


def test_every_honest_student_keeps_full_marks_and_each_attacker_gets_a_stated_reason(attacked):
    k, out, proc = attacked
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.read_text(encoding="utf-8-sig").splitlines() == [
        "student,stage1,total,max,folder", "ada,10,10,10,ada", "bob,10,10,10,bob", "dee,10,10,10,dee",
        "eve,0,0,10,eve", "fay,0,0,10,fay", "gus,10,10,10,gus", "hal,10,10,10,hal", "ivy\\xff,10,10,10,ivy%FF"]
    reports = class_outputs.reports_dir(out)
    reason = {name: json.loads((reports / f"{name}.json").read_text(encoding="utf-8"))["stages"][0]["reason"]
              for name in ("eve", "fay")}
    assert reason["eve"] == f"{STAGE1} is a symbolic link; submit the file itself", reason
    assert reason["fay"] == f"{STAGE1} is not a regular file under {discovery.MAX_FILE} bytes", reason
    found = json.loads((reports / "dee.json").read_text(encoding="utf-8"))["stages"][0]["found"]
    assert found == [STAGE1, "old\\xff/stage01_value.py"], "the name is shown, byte for byte, never lost"


def test_the_reports_stay_printable_and_within_their_bound_whatever_the_files(attacked):
    k, out, proc = attacked
    reports = class_outputs.reports_dir(out)
    names = sorted(p.name for p in reports.iterdir())
    assert len(names) == 2 * 8 and class_outputs.safe_name("ivy\\xff") + ".json" in names, names
    for path in reports.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not UNPRINTABLE.search(text), path.name
        assert path.stat().st_size < MAX_STAGE_REPORT, (path.name, path.stat().st_size)  # one stage
    hal = json.loads((reports / "hal.json").read_text(encoding="utf-8"))["stages"][0]
    assert hal["source"] == STAGE1 and hal["score"] == 10
    assert len(hal["found"]) == MAX_FOUND and hal["found_total"] > 1000, "named: the first ten and how many"
    assert not UNPRINTABLE.search(proc.stdout)
    assert sorted(re.findall(r"^(\S+): (\d+)/10$", proc.stdout, re.M)) == sorted(
        [(n, "10") for n in ("ada", "bob", "dee", "gus", "hal", "ivy\\xff")] + [("eve", "0"), ("fay", "0")])


def test_a_rerun_keeps_everyone_and_reads_no_fifo_and_no_device(attacked):
    k, out, _ = attacked
    again = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--class", str(k), "--stage", "1",
                 "--out", str(out)], cwd=ROOT, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("(unchanged, kept)") == 8, again.stdout


def test_a_single_grading_with_a_name_that_is_not_utf8_writes_its_report(attacked, tmp_path):
    k, _, _ = attacked
    out = tmp_path / "dee.json"
    proc = run([sys.executable, "-m", "autograd_kata.cli", "grade", "--submission", str(k / "dee"), "--stage", "1",
                "--format", "json", "--out", str(out)], cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["score"] == 10 and "old\\xff/stage01_value.py" in proc.stdout


# --- bounds, in the grader's own steps ----------------------------------------------------------------

def test_a_walk_is_bounded_in_depth_and_entries_and_never_recurses(tmp_path):
    (tmp_path / "sub").mkdir()
    deep(tmp_path / "sub", 1100)
    try:
        assert discovery.find_stage_files(tmp_path / "sub", stage(1)) == [], "deeper than MAX_DEPTH: not searched"
    finally:
        undeep(tmp_path / "sub")
    shallow = tmp_path / "shallow"
    put(shallow, "/".join(["d"] * (discovery.MAX_DEPTH - 1)) + "/stage01_value.py", "")
    assert len(discovery.find_stage_files(shallow, stage(1))) == 1, "within MAX_DEPTH: found"
    many = tmp_path / "many"
    decoys(many, discovery.MAX_ENTRIES + 2000, names=["stage01_value.py"])
    put(many, STAGE1, "")
    found = discovery.find_stage_files(many, stage(1))
    assert len(found) < discovery.MAX_ENTRIES / 2, "the walk stops"
    assert found[0] == many / STAGE1, "the rule's first place is looked at whatever the walk reached"


@pytest.mark.parametrize("make, why", [
    (lambda p: p.symlink_to("/dev/zero"), "a link"),
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.write_bytes(b"x" * (discovery.MAX_FILE + 1)), "too big"),
    (lambda p: p.mkdir(), "a folder"),
])
def test_only_a_regular_file_of_a_bounded_size_is_ever_read(tmp_path, make, why):
    path = tmp_path / "f"
    make(path)
    assert discovery.read_regular(path) is None, why
    (tmp_path / "ok").write_bytes(b"x" * discovery.MAX_FILE)
    assert discovery.read_regular(tmp_path / "ok") == b"x" * discovery.MAX_FILE


def test_eight_stages_of_decoys_and_floods_give_a_report_under_the_documented_bound(tmp_path):
    """20,000 decoys named like every stage's file, and every test's message a flood of the
    characters that grow most when written (XML and JSON escapes, three-byte kana): every
    format stays under MAX_STAGE_REPORT a stage, the figure docs/instructors.md gives."""
    sub = tmp_path / "sub"
    decoys(sub, 20_000)
    stages = []
    for s in STAGES:
        g = prepare_stage(s, sub, tmp_path / f"stage{s.number}")
        assert len(g.found) == MAX_FOUND and g.found_total > 2000, (len(g.found), g.found_total)
        ids = [f"{s.test_file}::test_{i}" for i in range(40)]
        fill(g, ids, {i: {"nodeid": i, "outcome": "failed", "kind": "wrong",
                          "message": ('<&"\\' * 1000 + "あ" * 3000 + "\n") * 2} for i in ids})
        assert sum(len(t.message.encode()) for t in g.tests) < 2 * MAX_STAGE_MESSAGES
        stages.append(g)
    report = Report(str(sub), stages, isolated=True, isolation="isolation: test")
    sizes = {fmt: len(render(report, fmt, lang).encode()) for fmt in FORMATS for lang in ("en", "ja")}
    assert max(sizes.values()) < MAX_STAGE_REPORT * len(STAGES), sizes
    docs = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    assert f"A report stays under {MAX_STAGE_REPORT // 1000} KB a stage" in docs, "docs and report.py agree"


def test_every_format_stays_printable_and_the_xml_parsable_for_any_text(tmp_path):
    """A path with a newline, a fence and terminal escapes; an exception text with every control
    character, a lone surrogate and XML's own syntax: no format carries a control character,
    JUnit XML and both JSONs parse, and the table keeps one line per row."""
    nasty = "".join(map(chr, range(32))) + "\x7f\x9b\udcff]]><!--&amp;\u2028"
    sub = tmp_path / "sub"
    path = put(sub, "x\n```\n\x1b[2K\x1b[1A## 100/100/stage01_value.py", "")
    g = prepare_stage(stage(1), sub, tmp_path / "stage")
    assert g.source == discovery.shown(str(path.relative_to(sub))) and "\n" not in g.source
    fill(g, [f"{stage(1).test_file}::test_a"], {f"{stage(1).test_file}::test_a": {
        "nodeid": f"{stage(1).test_file}::test_a", "outcome": "failed", "kind": "wrong", "message": nasty * 3}})
    report = Report(str(sub) + "\x1b]0;title\x07", [g], isolated=True, isolation="isolation: test", message=nasty)
    for fmt in FORMATS:
        text = render(report, fmt, "en")
        assert not UNPRINTABLE.search(text), (fmt, [c for c in text if UNPRINTABLE.match(c)])
        text.encode("utf-8")
        if fmt == "junit":
            ET.fromstring(text.split("\n", 1)[1])
        elif fmt != "text":
            json.loads(text)
    table = render(report, "text", "en").splitlines()
    assert not any(line.startswith(("```", "## ")) for line in table), table


# --- names: one per student in every output ------------------------------------------------------------

NAMES = ["a\\b", "a_b", "x\ny", "\x1b[31mred", "'quote", "=sum", "tick```", "%5C", "a%5Cb"]


def test_every_name_gets_its_own_report_its_own_csv_row_and_one_summary_line(tmp_path):
    k = tmp_path / "class"
    for name in NAMES:
        put(k / name, STAGE1, "PASS\n")
    (k / ".hidden").mkdir()  # skipped
    put(k / os.fsdecode(b"b\xff"), STAGE1, "not yet\n")
    out = tmp_path / "grades.csv"
    records = course.grade_class(k, ROOT, out, (stage(1),), grade_one=fake_grade, workers=1)
    shown = sorted(discovery.shown(n) for n in NAMES) + ["b\\xff"]
    assert sorted(r["student"] for r in records) == sorted(shown)
    assert len(set(shown)) == len(shown) and len(set(map(class_outputs.safe_name, shown))) == len(shown)
    files = sorted(p.name for p in class_outputs.reports_dir(out).iterdir())
    assert len(files) == 2 * len(shown), files
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert len(rows) == 1 + len(shown), rows
    summary = class_outputs.summary_path(out).read_text(encoding="utf-8")
    assert not UNPRINTABLE.search(summary + "".join(rows))
    passed = next(line for line in summary.splitlines() if line.startswith("  passed"))
    assert passed.count(", ") == len(shown) - 2 and "x\\x0ay" in passed, passed  # every name but b\xff's
    assert all(line == "" or line.startswith(("kata grade", "stage", "  ", "classic")) for line in summary.splitlines())
    again = course.grade_class(k, ROOT, out, (stage(1),), grade_one=lambda *a, **kw: pytest.fail("regraded"),
                               workers=1)
    assert len(again) == len(shown), "every record is found again under its own name"


def test_a_student_whose_grading_fails_is_not_graded_with_the_reason_and_the_run_goes_on(tmp_path):
    """A failure met with one student (here: their grading raised) leaves them not graded, with
    the reason, and the run goes on; the disk filling up is the run's, and stops it (the CSV of
    who was done stays whole)."""
    k = tmp_path / "class"
    for name in ("ada", "bad", "zed"):
        put(k / name, STAGE1, "PASS\n")

    def grade_one(submission, *a, **kw):
        if Path(submission).name == "bad":
            raise UnicodeEncodeError("utf-8", "old\udcff", 3, 4, "surrogates not allowed")
        return fake_grade(submission, *a, **kw)

    out = tmp_path / "grades.csv"
    records = course.grade_class(k, ROOT, out, (stage(1),), grade_one=grade_one, workers=1)
    assert [(r["student"], r["score"], r["status"]["1"]) for r in records] == [
        ("ada", 10, "passed"), ("bad", None, "not_graded"), ("zed", 10, "passed")]
    bad = json.loads((class_outputs.reports_dir(out) / "bad.json").read_text(encoding="utf-8"))
    reason = bad["stages"][0]["reason"]
    assert reason.startswith("not graded: the grader failed (") and "UnicodeEncodeError" in reason, reason
    ja = (class_outputs.reports_dir(out) / "bad.txt")
    course.grade_class(k, ROOT, out, (stage(1),), grade_one=grade_one, workers=1, lang="ja", force=True)
    said = ja.read_text(encoding="utf-8")
    assert "未採点: 採点ツールが失敗しました（" in said and "UnicodeEncodeError" in said, said

    def full_disk(submission, *a, **kw):
        if Path(submission).name == "bad":
            raise OSError(errno.ENOSPC, "No space left on device")
        return fake_grade(submission, *a, **kw)

    with pytest.raises(OSError, match="No space left"):
        course.grade_class(k, ROOT, out, (stage(1),), grade_one=full_disk, workers=1, force=True)
    assert out.read_text(encoding="utf-8-sig").splitlines()[:2] == ["student,stage1,total,max,folder",
                                                                  "ada,10,10,10,ada"]


@pytest.fixture
def tiny_disk(tmp_path):
    """A 96 KiB tmpfs (root only: mounting needs it)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"no tmpfs could be mounted here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_stops_the_run_loses_no_work_and_a_rerun_resumes(tmp_path, tiny_disk):
    """The reports fill the disk midway: the run stops with the disk's error, every student in
    the CSV has whole reports, nothing half-written is left, and a rerun elsewhere keeps them."""
    k = tmp_path / "class"
    names = [f"s{i:02d}" for i in range(12)]
    for name in names:
        put(k / name, STAGE1, "x" * 3000 + " <big> \n")  # a failure message: about 10 KB of reports each
    out = tiny_disk / "grades.csv"
    with pytest.raises(OSError) as raised:
        course.grade_class(k, ROOT, out, (stage(1),), grade_one=fake_grade, workers=1)
    assert raised.value.errno == errno.ENOSPC
    left = sorted(p.name for p in tiny_disk.rglob("*"))
    assert not [n for n in left if n.endswith(".partial")], left
    reports = class_outputs.reports_dir(out)
    recorded = sorted(p.stem for p in reports.glob("*.json"))
    assert 0 < len(recorded) < len(names), left
    in_csv = class_outputs.read_csv_students(out) if out.exists() else []
    assert set(in_csv) <= set(recorded), "the CSV names only students with whole reports"
    for name in recorded:
        data = json.loads((reports / f"{name}.json").read_text(encoding="utf-8"))
        assert data["course"]["student"] == name and (reports / f"{name}.txt").is_file()
    roomy = tmp_path / "roomy"
    shutil.copytree(tiny_disk, roomy)
    calls, counted = counting()
    records = course.grade_class(k, ROOT, roomy / "grades.csv", (stage(1),), grade_one=counted, workers=1)
    assert [r["student"] for r in records] == names
    assert sorted(calls) == sorted(set(names) - set(recorded)), "who was kept is not graded again"


def test_a_name_starting_with_a_quote_or_a_formula_merges_back(tmp_path, capsys):
    k = tmp_path / "class"
    for name in ("'quote", "=sum", "''two", "plain"):
        put(k / name, stage(1).source("exercises"), "PASS\n")
    out = tmp_path / "grades.csv"
    course.grade_class(k, ROOT, out, (stage(1),), grade_one=fake_grade, workers=1)
    text = out.read_text(encoding="utf-8-sig")
    assert "\n'=sum," in text and "\n''quote," in text, "never a formula, and a ' kept"
    assert sorted(class_outputs.read_csv_students(out)) == sorted(["'quote", "=sum", "''two", "plain"])
    merged = class_outputs.merge([out], tmp_path / "all.csv")
    assert sorted(r["student"] for r in merged) == sorted(["'quote", "=sum", "''two", "plain"])


# folder names an instructor's roster holds: formula-like, a quote, a dash, Japanese, a newline, and a
# C1 control beside the byte that is not UTF-8 it once shared a name with (both were "b\x85")
ROSTER = ["=1+1", "'apos", "-m17", "@x", "+plus", "山田 太郎", "a\nb", "a%0Ab", "b\u0085", os.fsdecode(b"b\x85"),
          "a\\x0ab", "plain"]


def test_every_folder_name_joins_back_to_the_roster_through_shards_and_the_merge(tmp_path, monkeypatch):
    """Each folder is one student in every shard's CSV and in the merge, and the CSV's ``folder``
    column, URL-unescaped, is the folder's name itself (docs/instructors.md, "A whole course"):
    a roster joins on it, whatever the name."""
    from urllib.parse import unquote
    k = tmp_path / "class"
    for name in ROSTER:
        put(k / name, STAGE1, "PASS\n")
    shards = []
    for i in (1, 2, 3):
        shards.append(tmp_path / f"grades-{i}.csv")
        course.grade_class(k, ROOT, shards[-1], (stage(1),), grade_one=fake_grade, workers=1, shard=(i, 3))
    (tmp_path / "all").mkdir()
    merged = class_outputs.merge(shards, tmp_path / "all" / "grades.csv")
    assert len(merged) == len(ROSTER), sorted(r["student"] for r in merged)
    for csv_file in shards + [tmp_path / "all" / "grades.csv"]:
        text = csv_file.read_text(encoding="utf-8-sig")
        assert not UNPRINTABLE.search(text)
        rows = list(csv.DictReader(io.StringIO(text)))
        assert all(not row["folder"].startswith(("=", "+", "-", "@", "'")) for row in rows), "never a formula"
        joined = sorted(unquote(row["folder"], errors="surrogateescape") for row in rows)
        if csv_file.parent.name == "all":
            assert joined == sorted(ROSTER), "the folder column is each folder's own name, URL-escaped"
        reports = class_outputs.reports_dir(csv_file)
        files = {p.stem for p in reports.glob("*.json")}
        assert files == {row["folder"] for row in rows}, "each report file is named by its folder's key"
        for row in rows:
            data = json.loads((reports / f"{row['folder']}.json").read_text(encoding="utf-8"))
            assert discovery.unshown(data["course"]["student"]) == unquote(row["folder"], errors="surrogateescape")
    summary = class_outputs.summary_path(tmp_path / "all" / "grades.csv").read_text(encoding="utf-8")
    passed = next(line for line in summary.splitlines() if line.startswith("  passed"))
    assert passed.count(", ") == len(ROSTER) - 1 and "b\\u0085" in passed and "b\\x85" in passed, passed
    docs = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    block = docs.split("### Joining the grades with your roster")[1].split("```python\n")[1].split("```")[0]
    said: dict = {}
    monkeypatch.chdir(tmp_path / "all")
    exec(block, said)  # the instructors' join, as docs/instructors.md gives it
    assert sorted(said["by_folder"]) == sorted(ROSTER), "the docs' join finds every folder by its own name"
