"""Classroom 50 autograder for the autograd kata, written by `kata autograder
--classroom50 DIR`.  Put DIR's contents at CLASSROOM/autograders/ASSIGNMENT/ in
your classroom50 repository (this file is autograder.py; the rest are the
grader's own tests, conftest.py, pyproject.toml and the kata tool, bundled next
to it).  Classroom 50's runner calls it once per submission with the student's
checkout as the working directory; it must write ./result.json
(schema classroom50/result/v1) and exit 0 when it graded.

The tests that grade are these, the teacher's, never the student's copies.
Standard library only: it installs the kata from this folder into a private
virtual environment (or uses KATA_PYTHON, an interpreter that already has it).
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LANG = "@@LANG@@"
SCHEMA = "classroom50/result/v1"


def utc(stamp):
    return stamp.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def committed_at():
    """The graded commit's committer date (Classroom 50's submission instant), else now."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%cI"], capture_output=True, text=True,
                             timeout=30, check=False).stdout.strip()
        return utc(datetime.datetime.fromisoformat(out.replace("Z", "+00:00")))
    except (OSError, ValueError, subprocess.SubprocessError):
        return utc(datetime.datetime.now(datetime.timezone.utc))


def python(tmp):
    if os.environ.get("KATA_PYTHON"):
        return os.environ["KATA_PYTHON"]
    venv = Path(tmp) / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    exe = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    subprocess.run([str(exe), "-m", "pip", "install", "--quiet", str(HERE)], check=True)
    return str(exe)


def result(report, text):
    """Classroom 50's result.json from the kata's JSON report: one test per stage, worth its points."""
    tests = [{"test-name": f"Stage {g['number']}: {g['title']}", "passed": g["status"] == "passed",
              "score": g["score"], "max-score": g["max_score"], "message": g["reason"]}
             for g in report["stages"]]
    env = os.environ
    return {
        "schema": SCHEMA,
        "classroom": env.get("CLASSROOM", ""),
        "assignment": env.get("ASSIGNMENT", ""),
        "submission": env.get("SUBMISSION_TAG", ""),
        "commit": env.get("COMMIT_URL", ""),
        "release": env.get("RELEASE_URL", ""),
        "review": env.get("REVIEW_URL") or env.get("COMMIT_URL", ""),
        "datetime": committed_at(),
        "graded_at": utc(datetime.datetime.now(datetime.timezone.utc)),
        "score": sum(t["score"] for t in tests),
        "max-score": sum(t["max-score"] for t in tests),
        "tests": tests,
    }


def main():
    submission = Path.cwd()
    with tempfile.TemporaryDirectory(prefix="kata-classroom50-") as tmp:
        report_path = Path(tmp) / "report.json"
        proc = subprocess.run([python(tmp), "-m", "autograd_kata.instructor", "grade", "--submission", str(submission),
                               "--tests-from", str(HERE), "--format", "json", "--out", str(report_path),
                               "--lang", LANG], cwd=str(HERE), capture_output=True, text=True, check=False)
        print(proc.stdout, end="")
        print(proc.stderr, end="", file=sys.stderr)
        if proc.returncode not in (0, 1) or not report_path.is_file():
            print(f"::error::kata grade failed (exit status {proc.returncode})", file=sys.stderr)
            return 1  # Classroom 50: an infrastructure error, not a score
        report = json.loads(report_path.read_text(encoding="utf-8"))
    data = result(report, proc.stdout)
    partial = submission / "result.json.partial"
    partial.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, submission / "result.json")
    body = "\n".join(["## kata grade", "", f"**{data['score']}/{data['max-score']}**", "", "```",
                      proc.stdout.rstrip("\n"), "```", ""])
    (submission / "release-body.md").write_text(body, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
