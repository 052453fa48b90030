"""The last step of grading, submission -> sandbox -> judge -> **formats**: one
``grade.Report`` written as a text table, JSON, Gradescope's results.json, JUnit XML,
Classroom 50's result.json (its grading part) or PrairieLearn's results.json.

The words around the results come from the catalogue in ``lang`` (``kata grade
--lang``; default English); the judge speaks English (``folders.judge_env``), and
every test message it wrote as catalogue data (``said``) is said again in ``lang``
(``report.in_language``), a crash's and a hang's too (``i18n.joined``).
JSON is data: its keys and the policy stay English.
``timed=False`` (``--seed``) leaves out the time a grading took."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from autograd_kata.classroom.grading.discovery import shown
from autograd_kata.classroom.grading.report import POLICY, Report, in_language, printable
from autograd_kata.core.i18n import t_in
from autograd_kata.core.results.model import TestResult
from autograd_kata.core.term import pad, width

FORMATS = ("text", "json", "gradescope", "junit", "classroom50", "prairielearn")


def title(stage, lang: str = "en") -> str:
    return t_in(lang, stage.title_id)


def as_text(report: Report, lang: str = "en", timed: bool = True) -> str:
    report = in_language(report, lang)
    say = lambda msgid, **f: t_in(lang, msgid, **f)  # noqa: E731
    graded = say("report.graded", submission=report.submission)
    first = graded if report.isolated else report.first_line
    second = report.isolation if report.isolated else graded
    lines = [first, second, say("report.policy", policy=say("report.policy_text"))]
    lines += [say("report.note", note=w) for w in report.warnings] + [""]
    first_col = max(6, width(say("report.col.stage")) + 1)  # columns a terminal gives it (kana take two)
    lines.append(pad(say("report.col.stage"), first_col) + pad(say("report.col.title"), 30)
                 + pad(say("report.col.tests"), 9, right=True) + pad(say("report.col.score"), 9, right=True))
    for g in report.stages:
        # the grader's failure: no count and no score, never a 0
        tests, score = (f"{g.passed}/{g.total}", f"{g.score}/{g.max_score}") if g.graded else \
            (f"-/{g.total}", f"-/{g.max_score}")
        lines.append(pad(str(g.stage.number), first_col) + pad(title(g.stage, lang)[:29], 30) + f"{tests:>9}{score:>9}")
        indent = " " * first_col
        if g.file_note():
            lines.append(f"{indent}   {g.file_note(lang)}")
        if g.problem:
            for i, line in enumerate(g.problem.splitlines()[:6]):
                lines.append(f"{indent}{'-> ' if i == 0 else '   '}{line}")
        lines += [f"{indent}   {note}" for note in g.advisory_notes(lang)]
    total = f"{report.score}/{report.max_score}" if report.graded else say("report.not_graded")
    lines.append(pad(say("report.total"), first_col + 39) + f"{total:>9}")
    if report.message:
        lines += ["", report.message]
    if not report.graded:
        lines += ["", say("report.not_graded_note")]
    if timed:
        lines.append(say("report.seconds", seconds=f"{report.seconds:.1f}"))
    return "\n".join(lines) + "\n"


def as_json(report: Report, lang: str = "en", timed: bool = True) -> str:
    data = report.to_dict()
    if not timed:
        data["seconds"] = None
        for g in data["stages"]:
            g["seconds"] = None
            for t in g["tests"] + g["advisory"]:
                t["seconds"] = None
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def stage_name(g, lang: str) -> str:
    return t_in(lang, "report.stage_name", n=g.stage.number, title=title(g.stage, lang))


def stage_output(g, lang: str) -> str:
    """A stage's part of a platform's feedback: tests passed, the file graded, why it scored 0,
    then each test with the first line of its failure."""
    out = [t_in(lang, "report.tests_passed", passed=g.passed, total=g.total, policy=t_in(lang, "report.policy_text"))]
    if g.file_note():
        out.append(g.file_note(lang))
    if g.problem:
        out.append(g.problem)
    for t in g.tests:
        line = f"{'PASS' if t.status == 'passed' else t.status.upper()}  {t.short}"
        if t.status != "passed" and t.message:
            line += f"\n      {t.headline}"
        out.append(line)
    out += g.advisory_notes(lang)
    return "\n".join(out)


def _summary(report: Report, lang: str) -> str:
    say = lambda msgid, **f: t_in(lang, msgid, **f)  # noqa: E731
    first = report.first_line if not report.isolated else say("report.graded", submission=report.submission)
    points = say("report.points", score=report.score, max=report.max_score, policy=say("report.policy_text")) \
        if report.graded else say("report.not_graded_note")
    return "\n".join([first, points] + ([report.message] if report.message else []))


def as_gradescope(report: Report, lang: str = "en", timed: bool = True) -> str:
    """Gradescope's results.json: one test entry per stage, worth its points (never the hidden seed)."""
    report = in_language(report, lang)
    tests = []
    for g in report.stages:
        tests.append({"name": stage_name(g, lang), "number": str(g.stage.number),
                      "score": float(g.score), "max_score": float(g.max_score),
                      "status": "passed" if g.ok else "failed", "output": stage_output(g, lang),
                      "visibility": "visible"})
    summary = _summary(report, lang)
    data = {"score": float(report.score), "execution_time": round(report.seconds),
            "output": summary, "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}
    if not timed:
        del data["execution_time"]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def as_classroom50(report: Report, lang: str = "en", timed: bool = True) -> str:
    """Classroom 50's result.json, its grading part (``classroom50/result/v1``: one test per stage,
    worth its points, whole points), in ``lang``; Classroom 50's autograder adds the submission's
    fields (``templates/classroom50_autograder.py.tmpl``)."""
    report = in_language(report, lang)
    tests = [{"test-name": stage_name(g, lang), "passed": g.ok, "score": g.score, "max-score": g.max_score,
              "message": g.problem} for g in report.stages]
    data = {"score": report.score, "max-score": report.max_score, "tests": tests}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


PRAIRIELEARN_LIMIT = 1_000_000  # bytes: PrairieLearn's limit on results.json (its docs, "Grading results")
SYNTAX = ("SyntaxError", "IndentationError", "TabError")


def _syntax_error(g) -> bool:
    """Whether ``g``'s submitted file did not compile (the judge's words as data: ``check.no_import``)."""
    def said(data) -> bool:
        if isinstance(data, dict):
            if data.get("id") == "check.no_import" and (data.get("args") or {}).get("kind") in SYNTAX:
                return True
            return any(said(v) for v in data.values())
        return isinstance(data, list) and any(said(v) for v in data)
    return any(t.kind == "import" and said(t.said) for t in g.tests)


def as_prairielearn(report: Report, lang: str = "en", timed: bool = True) -> str:
    """PrairieLearn's external grader results.json: ``score`` from 0 to 1, one test per stage with
    its ``points`` and ``max_points``; ``gradable: false`` (no score, no attempt lost) when the
    grader failed or a submitted file has a syntax error; always under PRAIRIELEARN_LIMIT."""
    report = in_language(report, lang)
    invalid = [g for g in report.stages if not g.graded or _syntax_error(g)]
    policy = t_in(lang, "report.policy_text")
    tests: list[dict[str, str | float]] = [
        {"name": stage_name(g, lang), "description": policy, "points": float(g.score) if g.graded else 0.0,
         "max_points": float(g.max_score), "message": g.problem, "output": stage_output(g, lang)}
        for g in report.stages]
    data: dict = {"gradable": not invalid, "message": _summary(report, lang), "tests": tests}
    if invalid:
        data["format_errors"] = [f"{stage_name(g, lang)}: {g.problem}" for g in invalid]
    else:
        data["score"] = round(report.score / report.max_score, 6) if report.max_score else 0.0
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    for keep in (20_000, 2_000, 200):  # each stage's output cut until the whole fits
        if len(text.encode("utf-8", "surrogatepass")) < PRAIRIELEARN_LIMIT:  # a half character: 3 bytes, as its U+FFFD
            break
        for test in tests:
            test["output"] = str(test["output"])[:keep]
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return text


def junit_key(nodeid: str) -> tuple[str, str]:
    """(classname, name) as pytest's JUnit XML writes them for ``nodeid``."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".").removesuffix(".py")
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def as_junit(report: Report, lang: str = "en", timed: bool = True) -> str:
    """JUnit XML: one testsuite per stage, one testcase per test; anything not
    reported passed is a failure."""
    report = in_language(report, lang)
    failures = sum(g.total - g.passed + (1 if g.problem and not g.tests else 0) for g in report.stages)
    tests = sum(max(g.total, 1 if g.problem and not g.tests else 0) for g in report.stages)
    root = ET.Element("testsuites", name="kata grade", tests=str(tests), failures=str(failures),
                      errors="0", time=f"{report.seconds:.3f}")
    for g in report.stages:
        cases = g.tests or ([TestResult(g.stage.module, "failed", g.problem)] if g.problem else [])
        suite = ET.SubElement(root, "testsuite", name=g.stage.module,
                              tests=str(len(cases)), failures=str(sum(c.status != "passed" for c in cases)),
                              errors="0", skipped="0", time=f"{g.seconds:.3f}")
        props = ET.SubElement(suite, "properties")
        for key, value in (("title", title(g.stage, lang)), ("points", g.max_score), ("score", g.score),
                           ("policy", POLICY), ("reason", g.problem), ("source", g.source),
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


def untimed(report: Report) -> Report:
    """A copy of ``report`` with every time set to 0: what ``--seed`` writes, the same on every run."""
    stages = [dataclasses.replace(g, seconds=0.0, tests=[dataclasses.replace(t, seconds=0.0) for t in g.tests],
                                  advisory=[dataclasses.replace(t, seconds=0.0) for t in g.advisory])
              for g in report.stages]
    return dataclasses.replace(report, stages=stages, seconds=0.0)


WRITERS = {"text": as_text, "json": as_json, "gradescope": as_gradescope, "junit": as_junit,
           "classroom50": as_classroom50, "prairielearn": as_prairielearn}


def render(report: Report, fmt: str, lang: str = "en", timed: bool = True) -> str:
    """``report`` in ``fmt``: the submission's path written out (``discovery.shown``: one line,
    any byte), and no control character but newline and tab anywhere (``report.printable``):
    nothing a submission names or says repaints a terminal or makes the XML unreadable."""
    if not timed:
        report = untimed(report)
    report = dataclasses.replace(report, submission=shown(report.submission))
    text = WRITERS[fmt](report, lang=lang, timed=timed)
    if fmt in ("json", "gradescope"):  # JSON writes a control character as an escape: those go too
        text = _JSON_CONTROL.sub(lambda m: m.group() if m.group() == "\\\\" else "", text)
    return printable(text)


_JSON_CONTROL = re.compile(r"\\\\|\\[bfr]|\\u00[01][0-9a-fA-F]")


def write_whole(path: Path, text: str, encoding: str = "utf-8") -> None:
    """``text`` into ``path``, whole or not at all: a failed write (a full disk) leaves the old
    file as it was and no partial file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding=encoding, newline="")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write(report: Report, fmt: str, out: str | None, echo=print, lang: str = "en", timed: bool = True) -> None:
    """Write the report; to ``out`` if given (also echoing the text table), else to stdout."""
    text = render(report, fmt, lang, timed)
    if out:
        path = Path(out)
        write_whole(path, text)
        if fmt != "text":
            echo(render(report, "text", lang, timed), end="")
        echo(f"wrote {fmt} report to {path}")
    else:
        echo(text, end="")
