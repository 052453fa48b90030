"""The last step of grading, submission -> sandbox -> judge -> **formats**: one
``grade.Report`` written as a text table, JSON, Gradescope's results.json or JUnit XML."""
from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from autograd_kata.classroom.grade import POLICY, Report, TestResult

FORMATS = ("text", "json", "gradescope", "junit")


def as_text(report: Report) -> str:
    second = report.isolation if report.isolated else f"kata grade: {report.submission}"
    lines = [report.first_line, second, f"policy: {POLICY}"]
    lines += [f"note: {w}" for w in report.warnings] + [""]
    lines.append(f"{'stage':<6}{'title':<30}{'tests':>9}{'score':>9}")
    for g in report.stages:
        lines.append(f"{g.stage.number:<6}{g.stage.title[:29]:<30}{f'{g.passed}/{g.total}':>9}"
                     f"{f'{g.score}/{g.max_score}':>9}")
        if g.file_note:
            lines.append(f"{'':6}   {g.file_note}")
        if g.reason:
            for i, line in enumerate(g.reason.splitlines()[:6]):
                lines.append(f"{'':6}{'-> ' if i == 0 else '   '}{line}")
    lines.append(f"{'total':<45}{f'{report.score}/{report.max_score}':>9}")
    if report.message:
        lines += ["", report.message]
    lines.append(f"graded in {report.seconds:.1f} s")
    return "\n".join(lines) + "\n"


def as_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"


def as_gradescope(report: Report) -> str:
    """Gradescope's results.json: one test entry per stage, worth its points."""
    tests = []
    for g in report.stages:
        out = [f"{g.passed}/{g.total} tests passed. {POLICY}."]
        if g.file_note:
            out.append(g.file_note[0].upper() + g.file_note[1:] + ".")
        if g.reason:
            out.append(g.reason)
        for t in g.tests:
            line = f"{'PASS' if t.status == 'passed' else t.status.upper()}  {t.short}"
            if t.status != "passed" and t.message:
                line += f"\n      {t.headline}"
            out.append(line)
        tests.append({"name": f"Stage {g.stage.number}: {g.stage.title}", "number": str(g.stage.number),
                      "score": float(g.score), "max_score": float(g.max_score),
                      "status": "passed" if g.ok else "failed", "output": "\n".join(out),
                      "visibility": "visible"})
    summary = f"{report.first_line}\n{report.score}/{report.max_score} points. {POLICY}."
    if report.message:
        summary += "\n" + report.message
    return json.dumps({"score": float(report.score), "execution_time": round(report.seconds),
                       "output": summary, "visibility": "visible", "stdout_visibility": "hidden",
                       "tests": tests}, indent=2, ensure_ascii=False) + "\n"


def junit_key(nodeid: str) -> tuple[str, str]:
    """(classname, name) as pytest's JUnit XML writes them for ``nodeid``."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".").removesuffix(".py")
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def as_junit(report: Report) -> str:
    """JUnit XML: one testsuite per stage, one testcase per test; anything not
    reported passed is a failure."""
    failures = sum(g.total - g.passed + (1 if g.reason and not g.tests else 0) for g in report.stages)
    tests = sum(max(g.total, 1 if g.reason and not g.tests else 0) for g in report.stages)
    root = ET.Element("testsuites", name="kata grade", tests=str(tests), failures=str(failures),
                      errors="0", time=f"{report.seconds:.3f}")
    for g in report.stages:
        cases = g.tests or ([TestResult(g.stage.module, "failed", g.reason)] if g.reason else [])
        suite = ET.SubElement(root, "testsuite", name=g.stage.module,
                              tests=str(len(cases)), failures=str(sum(c.status != "passed" for c in cases)),
                              errors="0", skipped="0", time=f"{g.seconds:.3f}")
        props = ET.SubElement(suite, "properties")
        for key, value in (("title", g.stage.title), ("points", g.max_score), ("score", g.score),
                           ("policy", POLICY), ("reason", g.reason), ("source", g.source),
                           ("found", ", ".join(g.found)), ("isolation", report.isolation)):
            ET.SubElement(props, "property", name=key, value=str(value))
        for c in cases:
            classname, name = junit_key(c.name) if "::" in c.name else (f"kata.{g.stage.module}", c.name)
            case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{c.seconds:.3f}")
            if c.status != "passed":
                message = c.headline
                failure = ET.SubElement(case, "failure", message=f"{c.status}: {message}"[:500], type=c.status)
                failure.text = c.message or c.status
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


WRITERS = {"text": as_text, "json": as_json, "gradescope": as_gradescope, "junit": as_junit}


def render(report: Report, fmt: str) -> str:
    return WRITERS[fmt](report)


def write(report: Report, fmt: str, out: str | None, echo=print) -> None:
    """Write the report; to ``out`` if given (also echoing the text table), else to stdout."""
    text = render(report, fmt)
    if out:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)  # whole or not at all
        if fmt != "text":
            echo(as_text(report), end="")
        echo(f"wrote {fmt} report to {path}")
    else:
        echo(text, end="")
