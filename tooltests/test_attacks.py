"""The jail, tried as a determined student would, in every set-up a grader runs in.

Every attack class that reached 100/100 against the old in-process grader is
written here as a few lines at the top of a stage file, the way a determined
student would; the rest of the file is the stub.  Graded through ``kata
grade`` (the CLI, as an instructor runs it) and through the Gradescope
``run_autograder``, each must score exactly what its honest code earns (0:
stubs), the report must be the grader's own, and a poisoning attempt must not
change the next submission's score.  Then the jail itself: what a probe in it
can read, write and signal, what it leaves behind, and how much it can take.

The attacks know where things are (the grader's repository, the venv's
site-packages, the results file): a student can guess all of them.

CI runs this file in four set-ups (``.ci/jail-setups``), each naming the mode it
must find in ``KATA_EXPECT_MODE``: as full root (``namespaces``), as root with
Docker's default capabilities (``chroot``), as an unprivileged user with user
namespaces (``userns``) and without them (``none``).  The attacks need a jail;
in ``none`` they skip, and what that mode still guarantees is tested instead.
README's table ("What is guaranteed") is what these tests show.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

import pytest

from autograd_kata.classroom.platforms.gradescope import build_autograder, unpack
from autograd_kata.classroom.sandbox import jail, jailroot, pool
from autograd_kata.core.manifest import STAGES
from autograd_kata.core.student_copy import source_files
from kit import reference, stub

FOUND = jail.detect()
needs_jail = pytest.mark.skipif(not FOUND.isolated, reason=f"no jail on this machine: {FOUND.line}")
as_root = pytest.mark.skipif(not jail.is_root(), reason="Gradescope runs run_autograder as root")
pytestmark = [pytest.mark.timeout(600)]

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
for _place in (glob.glob(%(tmp)r + "/kata-grade-*/*/tests/test_stage0*.py")
               + glob.glob(%(grader)r + "/tests/test_stage0*.py")):
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


def test_the_set_up_is_the_one_ci_asked_for():
    expected = os.environ.get("KATA_EXPECT_MODE")
    if not expected:
        pytest.skip(f"KATA_EXPECT_MODE is not set; this machine gives {FOUND.mode}")
    assert FOUND.mode == expected, FOUND.line


@needs_jail
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
    assert not sandboxes_alive(), "a sandbox process outlived the grading"
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


@needs_jail
@as_root
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


@as_root
def test_a_grader_killed_midway_leaves_no_score(tmp_path, autograder):
    """Killed midway (Gradescope's own timeout, the OOM killer): no results.json, so no score
    is published (Gradescope says the autograder failed), and never the forged old one."""
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
    pool.sweep()  # what the killed grader could not end
    assert not results.exists(), results.read_text()


# --- the jail itself, in whatever set-up this run has ------------------------------------------

SERVER_MARK = b"The sandbox side of grading"  # sandbox_server's docstring: in every sandbox's command line


def sandboxes_alive() -> list[str]:
    """Sandbox processes that should be gone: of a pool user no sandbox holds (root), or, without
    root, any sandbox server of ours still running (the non-root set-ups run one test at a time)."""
    if jail.is_root():
        return pool.leftovers()
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if SERVER_MARK in f.read() and os.stat(f"/proc/{entry}").st_uid == os.getuid():
                    found.append(f"sandbox process {entry}")
        except OSError:
            pass
    return found


def readme_row(mode: str) -> list[str]:
    """README's row of the isolation table for ``mode``: read, write, signal, keep."""
    for line in (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and f"(`{mode}`)" in cells[0]:
            return cells[1:]
    raise AssertionError(f"README's isolation table has no row for `{mode}`")


READ = {True: "its own file and the standard library",
        False: "whatever you can read, but not the judge's memory or environment"}
WRITE = {True: "nothing", False: "whatever you can write"}
SIGNAL = {True: "nothing but itself", False: "your processes, the judge among them"}

PROBE = r'''
import ctypes, json, os, resource, socket, threading
seen = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "cwd": os.getcwd(),
        "here": sorted(os.listdir(".")), "env": sorted(os.environ)}
def readable(path):
    try:
        with open(path, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False
def attempt(fn):
    try:
        fn()
        return "allowed"
    except (OSError, RuntimeError) as error:
        return type(error).__name__
def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
def thread():
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()
def write(path):
    with open(path, "w") as f:
        f.write("x")
    os.unlink(path)
libc = ctypes.CDLL(None, use_errno=True)
def shm():
    number = libc.shmget(0, 4096, 0o1600)
    if number < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    libc.shmctl(number, 0, None)
seen["read"] = {p: readable(p) for p in %(secrets)r}
seen["read_own"] = readable("exercises/__init__.py")
seen["write"] = {p: attempt(lambda: write(p)) for p in ("exercises/mine.py", "/tmp/kata-probe-w", "mine.py")}
seen["signal_judge"] = attempt(lambda: os.kill(%(judge)d, 0))
seen["fork"], seen["thread"] = attempt(fork), attempt(thread)
seen["socket"], seen["shm"] = attempt(lambda: socket.socket().close()), attempt(shm)
seen["as"] = resource.getrlimit(resource.RLIMIT_AS)[0]
seen["nproc"] = resource.getrlimit(resource.RLIMIT_NPROC)[0]
seen["limits"] = {name: resource.getrlimit(getattr(resource, name)) for name in
                  ("RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_MEMLOCK", "RLIMIT_CPU")}
print(json.dumps(seen))
'''


def stage_dir(tmp_path: Path) -> Path:
    """A stage folder where this set-up's grader would make one (in the jail's root for chroot)."""
    folder = jailroot.stage_folder(Path(FOUND.root)) if FOUND.mode == "chroot" else tmp_path / "stage"
    (folder / "exercises").mkdir(parents=True)
    (folder / "exercises" / "__init__.py").write_text("")
    for path in (folder, folder / "exercises"):
        os.chmod(path, 0o755)
    os.chmod(folder / "exercises" / "__init__.py", 0o644)
    return folder


def test_what_the_submitted_code_can_read_write_and_signal(tmp_path):
    folder = stage_dir(tmp_path)
    secrets = [str(ROOT / "tests" / "test_stage01_value.py"), str(ROOT / "solutions" / "stage01_value.py"),
               str(Path(SITE) / "pytest" / "__init__.py"), "/proc/1/environ", "/etc/shadow",
               f"/proc/{os.getpid()}/environ"]
    os.environ["KATA_HIDDEN_SEED_PROBE"] = "secret"
    try:
        launch = jail.launcher(folder, mode=FOUND.mode, root=FOUND.root or None)
        proc = launch([sys.executable, "-I", "-S", "-c", PROBE % {"secrets": secrets, "judge": os.getpid()}],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=30)
        uid = proc.kata_uid
        proc.kata_end()
    finally:
        del os.environ["KATA_HIDDEN_SEED_PROBE"]
        if FOUND.mode == "chroot":
            shutil.rmtree(folder)
    assert proc.returncode == 0, err
    seen = json.loads(out)
    # in every set-up: one process, no thread, no socket, no SysV IPC, the limits, a clean environment
    assert {k: seen[k] for k in ("fork", "thread", "socket", "shm")} == \
        {"fork": "BlockingIOError", "thread": "RuntimeError", "socket": "PermissionError", "shm": "PermissionError"}
    assert seen["as"] == jail.GiB and seen["nproc"] == 1
    # docs/instructors.md: 64 open files, no file over 8 MiB, no core file, CPU seconds (soft = hard:
    # the sandbox cannot raise them)
    cpu = seen["limits"].pop("RLIMIT_CPU")
    assert seen["limits"] == {"RLIMIT_NOFILE": [64, 64], "RLIMIT_FSIZE": [8 << 20, 8 << 20], "RLIMIT_CORE": [0, 0],
                              "RLIMIT_MEMLOCK": [0, 0]}, seen["limits"]
    assert cpu[0] == cpu[1] and 0 < cpu[0] < 3600, cpu
    assert "KATA_HIDDEN_SEED_PROBE" not in seen["env"] and seen["read_own"]
    if jail.is_root() and FOUND.isolated:  # a user of the pool: never root, never the judge's
        assert seen["uid"] == uid != 0 and seen["gid"] != 0 and seen["groups"] == []
    elif FOUND.isolated:  # a user namespace keeps the grader's uid, with nothing of the grader's in sight
        assert seen["uid"] == os.getuid()
    hidden = not any(seen["read"].values())
    sealed = all(v != "allowed" for v in seen["write"].values())
    apart = seen["signal_judge"] != "allowed"
    assert sealed and apart, seen  # every set-up, none included: the seccomp allow list (seccomp.py)
    if FOUND.isolated:
        assert hidden, seen
        assert seen["cwd"] == launch.folder_inside and seen["here"] == ["exercises"]
    else:  # what the grading user can read, but never the judge's environment
        assert seen["read"][secrets[0]] and not seen["read"][f"/proc/{os.getpid()}/environ"], seen
    assert [READ[hidden], WRITE[sealed], SIGNAL[apart]] == readme_row(FOUND.mode)[:3]


LEFTOVERS = r'''
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
libc.shmget(0x6B617461, 1 << 20, 0o1666)        # IPC_CREAT: a segment that outlives every process
libc.msgget(0x6B617462, 0o1666)
libc.semget(0x6B617463, 1, 0o1666)
if platform.machine() == "x86_64":               # add_key("user", ..., KEY_SPEC_USER_KEYRING)
    libc.syscall(248, b"user", b"kata-leftover", b"x", 1, -4)
for place in ("/tmp", "/var/tmp", "/dev/shm", os.getcwd(), os.environ.get("HOME", "/"), "/"):
    try:
        with open(os.path.join(place, "kata-leftover-%(tag)s"), "w") as f:
            f.write("still here")
    except OSError:
        pass
try:
    if os.fork() == 0:
        os.setsid()
        import time
        time.sleep(300)
except OSError:
    pass
'''


def ipc_keys() -> set[str]:
    keys = set()
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as f:
            keys |= {line.split()[0] for line in f.read().splitlines()[1:]}
    return keys


def test_nothing_is_left_behind(tmp_path):
    tag = os.urandom(4).hex()
    folder = tmp_path / "student"
    for n in (1, 2):
        path = folder / STAGES[n - 1].source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(on_stub(n, LEFTOVERS % {"tag": tag}), encoding="utf-8")
    before = ipc_keys()
    proc = kata("grade", "--submission", str(folder), "--stage", "1", "--stage", "2", "--format", "json",
                "--out", str(tmp_path / "r.json"))
    assert proc.returncode == 1 and json.loads((tmp_path / "r.json").read_text())["score"] == 0, proc.stderr
    places = ["/tmp", "/var/tmp", "/dev/shm", "/", str(folder)]
    if FOUND.mode == "chroot":
        places.append(FOUND.root)
    files = [p for place in places for p in Path(place).glob(f"kata-leftover-{tag}")]
    files += list(Path(FOUND.root or tmp_path).rglob(f"kata-leftover-{tag}")) if FOUND.mode == "chroot" else []
    with open("/proc/keys") as f:
        keys = [line for line in f if "kata-leftover" in line]
    new_ipc = ipc_keys() - before
    assert not sandboxes_alive() and not keys and not new_ipc, (sandboxes_alive(), keys, new_ipc)
    for path in files:  # cleaned first, so a failure here leaves nothing for the next run
        path.unlink()
    assert not files, files  # every set-up, none included: the allow list lets it create no file
    assert readme_row(FOUND.mode)[3] == "nothing"


@pytest.mark.skipif(not jail.is_root(), reason="the pool of sandbox users is root's")
def test_a_lease_cleans_what_a_user_of_the_pool_left_before():
    lease = pool.acquire()
    uid, gid = lease.uid, lease.gid
    lease.release()
    ready = os.pipe()
    pid = os.fork()
    if pid == 0:  # what a killed judge's sandbox could leave: a process and a shared-memory segment
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        if os.fork() == 0:
            os.setsid()
            libc = ctypes.CDLL(None, use_errno=True)
            libc.shmget(0, 4096, 0o1600)
            os.write(ready[1], b"x")
            time.sleep(300)
        os._exit(0)
    os.waitpid(pid, 0)
    os.read(ready[0], 1)
    assert pool.processes_of(uid) and pool.ipc_of(uid)
    pool.sweep()
    assert not pool.processes_of(uid) and not pool.ipc_of(uid)


FLOOD = r'''
_BIG = "x" * %(size)d
class _Flood(Exception):
    pass
def _raise(*args, **kwargs):
    raise _Flood(_BIG, _BIG)
'''
FLOOD_TAIL = "\nfor _name in list(vars(Value)):\n" \
             "    if _name not in ('__dict__', '__weakref__', '__doc__', '__module__'):\n" \
             "        setattr(Value, _name, _raise)\n"


def test_a_flood_of_big_messages_gives_a_small_report_and_a_small_grader(tmp_path):
    folder = tmp_path / "student"
    for n, size in ((4, 1 << 20), (5, 900_000)):  # more than an answer may be, and just less
        path = folder / STAGES[n - 1].source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(on_stub(n, FLOOD % {"size": size}) + FLOOD_TAIL, encoding="utf-8")
    out = tmp_path / "r.json"
    measure = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    proc = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "autograd_kata", "grade",
                           "--submission", str(folder), "--stage", "4", "--stage", "5", "--format", "json",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "KATA_IMPL": ""})
    max_rss_mib = int(proc.stdout.split()[-1]) / 1024
    print(f"flood: report {out.stat().st_size} bytes, largest grading process {max_rss_mib:.0f} MiB")
    data = json.loads(out.read_text())
    size = out.stat().st_size
    assert data["score"] == 0 and len(data["stages"]) == 2
    messages = [t["message"] for g in data["stages"] for t in g["tests"]]
    assert max(map(len, messages)) <= 4100 and any("cut" in m for m in messages)
    # docs/instructors.md, "What is guaranteed": a report under 50 KB a stage (these 2: 100 KB),
    # and no grading process over 150 MiB, whatever the sandbox sends
    assert size < 100_000, size
    assert max_rss_mib < 150, max_rss_mib


ABUSE = r'''
import json, os, threading
_seen = {"forks": 0, "threads": 0, "allocated_mib": 0}
for _ in range(64):
    try:
        if os.fork() == 0:
            os._exit(0)
        _seen["forks"] += 1
    except OSError:
        break
try:
    threading.Thread(target=lambda: None).start()
    _seen["threads"] += 1
except RuntimeError:
    pass
_hold = []
try:  # address space, as RLIMIT_AS counts it (mapped, not touched: quick even under load)
    import mmap
    while _seen["allocated_mib"] < 4096:
        _hold.append(mmap.mmap(-1, 64 << 20))
        _seen["allocated_mib"] += 64
except (MemoryError, OSError):
    pass
del _hold
raise ImportError("ABUSE " + json.dumps(_seen))
'''


def test_forks_and_allocations_stay_within_the_limits(tmp_path):
    folder = tmp_path / "student"
    path = folder / STAGES[0].source("exercises")
    path.parent.mkdir(parents=True)
    path.write_text(on_stub(1, ABUSE), encoding="utf-8")
    proc = kata("grade", "--submission", str(folder), "--stage", "1", "--format", "json",
                "--out", str(tmp_path / "r.json"))
    data = json.loads((tmp_path / "r.json").read_text())
    message = data["stages"][0]["tests"][0]["message"]
    assert "ABUSE " in message, message
    seen = json.loads(message.split("ABUSE ", 1)[1].split("}", 1)[0] + "}")
    # README: one process, no thread, 1 GiB of address space (the interpreter takes some of it)
    assert seen["forks"] == 0 and seen["threads"] == 0 and seen["allocated_mib"] < 1024, seen
    assert proc.returncode == 1 and data["score"] == 0


def test_gradings_at_once_each_get_their_own_scores_and_a_hang_costs_only_its_stage(tmp_path):
    reference_dir, mixed, stubs = tmp_path / "ref", tmp_path / "mixed", tmp_path / "stubs"
    for s in STAGES:
        for folder, text in ((reference_dir, reference(s.number)), (stubs, stub(s.number)),
                             (mixed, reference(s.number))):
            path = folder / s.source("exercises")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    hang = mixed / STAGES[4].source("exercises")  # stage 5 loops; stage 3 does not parse
    hang.write_text(hang.read_text().replace("def backward(self", "def backward(self, *_, **__):\n"
                                             "        while True:\n            pass\n\n    def _old(self", 1))
    (mixed / STAGES[2].source("exercises")).write_text("def broken(:\n")
    results = {}

    def run(name, folder):
        results[name] = kata("grade", "--submission", str(folder), "--format", "json",
                             "--out", str(tmp_path / f"{name}.json"))

    threads = [threading.Thread(target=run, args=a) for a in (("ref", reference_dir), ("mixed", mixed),
                                                                ("stubs", stubs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    scores = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in results}
    assert scores["ref"]["score"] == 100, [g["reason"] for g in scores["ref"]["stages"] if g["reason"]]
    assert scores["stubs"]["score"] == 0
    by = {g["number"]: g for g in scores["mixed"]["stages"]}
    assert scores["mixed"]["score"] == 100 - by[3]["points"] - by[5]["points"], \
        {n: g["reason"][:200] for n, g in by.items() if g["reason"]}
    assert by[3]["score"] == 0 and by[5]["score"] == 0
    assert "SyntaxError" in by[3]["tests"][0]["message"] and "hung: " in by[5]["reason"]
    assert "your code was at exercises/stage05_backward.py:" in by[5]["reason"], by[5]["reason"]
    assert all(json.loads((tmp_path / f"{n}.json").read_text())["isolation"] == FOUND.line for n in results)
    assert not sandboxes_alive()
