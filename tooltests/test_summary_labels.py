"""Every classic mistake of the catalogue (autograd_kata/maintainer/mistakes.py), graded as one
student of a class through the grader itself (judge and sandbox, as ``kata grade --class``):
the summary files each student under the mistake their report names, never as a crash, with
that mistake's own label (its ``mistake.<id>``, true of each way the catalogue makes it).

test_mistakes.py checks the summary from the stage tests' own runs; this file checks what a
grading makes of them (the judge's kinds, a sandbox's crash caused by the mistake)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_mistakes import mistaken_source

from autograd_kata.classroom.course import outputs as class_outputs
from autograd_kata.classroom.course import run as course
from autograd_kata.core.i18n import t_in
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.mistakes import label_id
from autograd_kata.maintainer.mistakes import MISTAKES

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One class, a student per catalogued mistake (named by its id), graded once."""
    tmp = tmp_path_factory.mktemp("class")
    klass = tmp / "class"
    for m in MISTAKES:
        path = klass / m.id / stage(m.stage).source("exercises")
        path.parent.mkdir(parents=True)
        path.write_text(mistaken_source(m), encoding="utf-8")
    out = tmp / "grades.csv"
    records = {r["student"]: r for r in course.grade_class(klass, ROOT, out, STAGES, workers=2, seed=7)}
    summary = class_outputs.summary_path(out).read_text(encoding="utf-8")
    return out, records, summary.split("\n\n")[-1].splitlines()[1:]


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.id for m in MISTAKES])
def test_each_graded_mistake_is_filed_under_the_mistake_its_report_names_with_its_own_label(mistake, graded):
    out, records, named_lines = graded
    m = mistake
    r = records[m.id]
    report = json.loads((class_outputs.reports_dir(out) / f"{m.id}.json").read_text(encoding="utf-8"))
    stage_report = next(g for g in report["stages"] if g["number"] == m.stage)
    said = {ident for test in stage_report["tests"] for ident in test.get("mistakes", [])}
    advisory = {ident for test in stage_report["advisory"] for ident in test.get("mistakes", [])}
    if m.named in advisory and r["status"][str(m.stage)] == "passed":
        return  # a fact only the sandbox reports (advisory, docs/instructors.md): named in the report, no points lost
    msgid, fields = label_id(m.named)
    own = t_in("en", msgid, **fields)
    assert m.named in said, f"{m.id}: its report names {sorted(said)}, not {m.named}"
    assert r["status"][str(m.stage)] == "failed", f"{m.id}: stage {m.stage} is {r['status'][str(m.stage)]!r}"
    line = next((x for x in named_lines if x.startswith(f"  stage {m.stage}: {own} -- ")), "")
    assert m.id in line.rsplit(" -- ", 1)[-1].split(": ", 1)[-1].split(", "), \
        f"{m.id}: not listed under its own label {own!r}: {[x for x in named_lines if m.id in x]}"
