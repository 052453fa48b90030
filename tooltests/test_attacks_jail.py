"""The jail's own fences, tried from inside a sandbox, in whatever set-up this run has (issue 26).

Where ``test_attacks.py`` grades whole attacking submissions, this file probes what
one sandbox may do and what a grading leaves when it is cut short: the system calls
the seccomp allow list refuses (checked against the same probe run without it, so a
refusal is the filter's), the judge's environment and memory, writes in ``none``,
a read-only remount the kernel refuses, and judges that outlive a killed grader.
CI runs it in the four set-ups of ``.ci/jail-setups`` (each names its mode in
``KATA_EXPECT_MODE``), beside ``test_attacks.py``.
"""
from __future__ import annotations

import errno
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_attacks import FOUND, STAGES, kata, on_stub, readme_row, sandboxes_alive, stage_dir

from autograd_kata.classroom.sandbox import confine, jail, jailroot

pytestmark = [pytest.mark.timeout(300)]
x86_64 = pytest.mark.skipif(platform.machine() != "x86_64", reason="the probe's system call numbers are x86-64's")

# x86-64 numbers, from the kernel's arch/x86/entry/syscalls/syscall_64.tbl (not the filter's own table)
REACH = r'''
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
me, judge, AT_FDCWD = os.getpid(), %(judge)d, -100
buf = ctypes.create_string_buffer(64)
CALLS = {
    "modify_ldt": (154, 0, buf, 64), "open_tree": (428, AT_FDCWD, b".", 0), "fsopen": (430, b"tmpfs", 0),
    "move_mount": (429, -1, b"", AT_FDCWD, b"/", 0),
    "pidfd_open": (434, me, 0), "pidfd_getfd": (438, -1, 0, 0), "process_vm_readv": (310, me, 0, 0, 0, 0, 0),
    "process_vm_writev": (311, me, 0, 0, 0, 0, 0), "process_madvise": (440, -1, 0, 0, 0, 0),
    "kcmp": (312, me, me, 0, 0, 0), "memfd_create": (319, b"kata", 0), "openat2": (437, AT_FDCWD, b".", 0, 0),
    "io_uring_setup": (425, 1, 0), "userfaultfd": (323, 0),
}
def call(nr, *args):
    ctypes.set_errno(0)
    return "allowed" if libc.syscall(nr, *args) >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
def attempt(fn):
    try:
        fn()
        return "allowed"
    except OSError as error:
        return errno.errorcode.get(error.errno, type(error).__name__)
seen = {name: call(*args) for name, args in CALLS.items()}
seen["write_here"] = attempt(lambda: open("exercises/mine.py", "w").close())
seen["mkdir"] = attempt(lambda: os.mkdir("exercises/folder"))
seen["memfd"] = attempt(lambda: os.close(os.memfd_create("kata")))
seen["signal_judge"] = attempt(lambda: os.kill(judge, 0))
seen["signal_self"] = attempt(lambda: os.kill(me, 0))
seen["judge_environ"] = attempt(lambda: open(f"/proc/{judge}/environ", "rb").read())
seen["judge_memory"] = attempt(lambda: open(f"/proc/{judge}/mem", "rb").close())
seen["read_own"] = attempt(lambda: open("exercises/__init__.py").read())
seen["folder_read_only"] = bool(os.statvfs("exercises").f_flag & os.ST_RDONLY)
print(json.dumps(seen))
'''
# without the filter these succeed on any Linux kernel, so a refusal in the sandbox is the filter's
ALLOWED_UNFILTERED = ("open_tree", "pidfd_open", "process_vm_readv", "kcmp", "memfd_create", "memfd")
# issue 26's list: in the sandbox each fails with the filter's EPERM, whatever the kernel would say
# of its arguments (the filter answers before the kernel reads them)
NAMED = ("modify_ldt", "fsopen", "open_tree", "move_mount", "pidfd_getfd", "process_vm_readv", "process_vm_writev",
         "process_madvise", "kcmp", "memfd_create")


def probe(folder: Path, code: str) -> dict:
    launch = jail.launcher(folder, mode=FOUND.mode, root=FOUND.root or None)
    proc = launch([sys.executable, "-I", "-S", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kata_end()
    assert proc.returncode == 0, err
    return json.loads(out)


@pytest.fixture
def folder(tmp_path):
    found = stage_dir(tmp_path)
    yield found
    if FOUND.mode == "chroot":
        shutil.rmtree(found)


@x86_64
def test_the_allow_list_refuses_every_way_out_and_in(folder, tmp_path):
    code = REACH % {"judge": os.getpid()}
    control = tmp_path / "control"
    shutil.copytree(folder, control)
    unfiltered = json.loads(subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=control, check=True,
                                           capture_output=True, text=True).stdout)
    assert {k: unfiltered[k] for k in ALLOWED_UNFILTERED} == dict.fromkeys(ALLOWED_UNFILTERED, "allowed")
    assert unfiltered["write_here"] == unfiltered["signal_judge"] == "allowed"
    seen = probe(folder, code)
    # every set-up, none included: EPERM from the filter (a read-only root says EROFS first, a jail
    # without /proc ENOENT)
    let_through = {k: v for k, v in seen.items() if k not in ("signal_self", "read_own", "folder_read_only")
                   and v not in ("EPERM", "EACCES", "EROFS", "ENOENT")}
    assert not let_through
    assert {k: seen[k] for k in ALLOWED_UNFILTERED} == dict.fromkeys(ALLOWED_UNFILTERED, "EPERM"), seen
    assert {k: seen[k] for k in NAMED} == dict.fromkeys(NAMED, "EPERM"), seen
    assert seen["signal_judge"] == "EPERM" and seen["signal_self"] == "allowed" and seen["read_own"] == "allowed"


def test_the_judges_environment_and_memory_stay_closed_to_the_sandbox(folder):
    """The judge (the process that launches) is not dumpable: /proc/<judge>/environ, where
    KATA_HIDDEN_SEED is, cannot be read by the sandbox, though in ``none`` both run as one uid."""
    os.environ["KATA_HIDDEN_SEED_PROBE"] = "secret"
    try:
        seen = probe(folder, REACH % {"judge": os.getpid()})
    finally:
        del os.environ["KATA_HIDDEN_SEED_PROBE"]
    assert seen["judge_environ"] != "allowed" and seen["judge_memory"] != "allowed", seen
    assert confine.libc().prctl(3, 0, 0, 0, 0) == 0  # PR_GET_DUMPABLE: the launcher made this process so


def test_in_every_set_up_the_sandbox_writes_nothing_and_signals_only_itself_as_the_table_says(folder):
    seen = probe(folder, REACH % {"judge": os.getpid()})
    assert seen["write_here"] != "allowed" and seen["mkdir"] != "allowed" and seen["signal_judge"] != "allowed"
    assert readme_row(FOUND.mode)[1:3] == ["nothing", "nothing but itself"]


MEMFD = r'''
import errno, json, mmap, os
MiB = 1 << 20
seen = {"memfd": "allowed", "memfd_mib": 0, "shared_mib": 0}
try:
    fd = os.memfd_create("kata")
    chunk = b"\1" * (64 * MiB)
    while seen["memfd_mib"] < 1536:  # its pages are memory, and no address space of this process
        os.write(fd, chunk)
        seen["memfd_mib"] += 64
except OSError as error:
    seen["memfd"] = errno.errorcode.get(error.errno, "?")
try:  # shared anonymous memory, the other way to memory outside the heap: RLIMIT_AS counts it
    hold = mmap.mmap(-1, 1536 * MiB, flags=mmap.MAP_SHARED)
    seen["shared_mib"] = 1536
except OSError:
    pass
print(json.dumps(seen))
'''


def _limited_to_1_gib() -> None:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (confine.GiB, confine.GiB))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memfd_create is Linux's")
def test_memory_through_memfd_is_refused_not_just_left_to_the_address_space_limit(folder):
    """Measured (issue 26): ``memfd_create`` added 1.33 GB past the "1 GiB of address space".
    Under the same 1 GiB limit and no filter, 1.5 GB through a memfd is given (the limit does not
    count it); in the sandbox, in every set-up, ``memfd_create`` fails with EPERM (the allow list
    lacks it: PermissionError, an OSError), so none of it is, and shared memory is counted."""
    control = subprocess.run([sys.executable, "-I", "-S", "-c", MEMFD], capture_output=True, text=True,
                             preexec_fn=_limited_to_1_gib, timeout=120, check=True)
    assert json.loads(control.stdout) == {"memfd": "allowed", "memfd_mib": 1536, "shared_mib": 0}, control
    seen = probe(folder, MEMFD)
    assert seen == {"memfd": "EPERM", "memfd_mib": 0, "shared_mib": 0}, seen


DROP_A_MODULE = r'''
import glob, os
_seed = ""
for _pid in {os.getppid(), *[int(p) for p in os.listdir("/proc") if p.isdigit()]}:
    try:
        _env = open(f"/proc/{_pid}/environ", "rb").read()
    except OSError:
        continue
    if b"KATA_HIDDEN_SEED=" in _env:
        _seed = _env.split(b"KATA_HIDDEN_SEED=")[1].split(b"\0")[0].decode()
_shadow = "import sys\nsys.modules.pop('hypothesis', None)\nraise SystemExit(0)\n"
_dropped = []
for _place in glob.glob(%(tmp)r + "/kata-grade-*/judge*/tests") + glob.glob(%(tmp)r + "/kata-grade-*/judge*"):
    try:
        with open(os.path.join(_place, "hypothesis.py"), "w") as f:
            f.write(_shadow)
        _dropped.append(_place)
    except OSError:
        pass
if _seed or _dropped:
    raise ImportError(f"LEAK seed={_seed!r} dropped={_dropped!r}")
'''


def test_a_module_dropped_on_the_judges_path_and_the_hidden_seed_are_out_of_reach(tmp_path):
    import tempfile
    folder = tmp_path / "student"
    for n in (2, 5):  # stages whose hidden checks import Hypothesis lazily (tests/graphs.py)
        path = folder / STAGES[n - 1].source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(on_stub(n, DROP_A_MODULE % {"tmp": tempfile.gettempdir()}), encoding="utf-8")
    proc = kata("grade", "--submission", str(folder), "--stage", "2", "--stage", "5", "--format", "json",
                "--out", str(tmp_path / "r.json"))
    data = json.loads((tmp_path / "r.json").read_text())
    messages = " ".join(t["message"] for g in data["stages"] for t in g["tests"])
    assert "LEAK" not in messages, messages[:2000]
    assert proc.returncode == 1 and data["score"] == 0, [g["reason"] for g in data["stages"]]
    assert all(g["total"] > 1 for g in data["stages"])  # the judge's own tests ran, not a shadow's



JUDGE_SEES = r"""
import os, sys
block = open("/proc/self/environ", "rb").read()
import autograd_kata.classroom.grading.plugin  # what -p does first in a judge
print(b"8675309" in block, os.environ.get("KATA_HIDDEN_SEED"))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_the_hidden_seed_is_never_in_a_judges_environment_block_and_still_reaches_its_tests(tmp_path):
    """/proc/<judge>/environ is the environment as it was at exec, readable by any process of the
    judge's uid until the judge turns not dumpable (a sandbox of the grading user, in mode none):
    the seed comes through a socket instead, read once the judge is not dumpable, and the tests
    see it in os.environ all the same."""
    from autograd_kata.classroom.grading import judging
    env = {**os.environ, "KATA_HIDDEN_SEED": "8675309", "PYTHONPATH": os.pathsep.join(sys.path)}
    log = tmp_path / "judge.log"
    run = judging._run([sys.executable, "-c", JUDGE_SEES], tmp_path, env, 60, log)
    assert run.returncode == 0, run.output
    in_block, seen = run.output.split()[:2]
    assert in_block == "False", "the seed was in the judge's environment block: " + run.output
    assert seen == "8675309", "the judge's tests would not see the seed: " + run.output


# --- a read-only remount the kernel refuses ----------------------------------------------------

needs_mount_namespace = pytest.mark.skipif(FOUND.mode not in ("namespaces", "userns"),
                                           reason=f"no mount namespace in {FOUND.mode}")


@needs_mount_namespace
@pytest.mark.parametrize("how", ["refused", "ignored"])
def test_a_stage_folder_that_cannot_be_made_read_only_is_never_run(folder, monkeypatch, how):
    """Measured (issue 26): non-root, TMPDIR on a noexec mount, the remount refused, the stage
    folder left writable.  Simulated here in the child's own mount calls: refused (EPERM), or
    accepted without effect; either way the launch fails and says why, and nothing runs."""
    real = confine._mount

    def mount(source, target, fstype, flags, data=None):
        if flags & confine.MS_REMOUNT and str(target).rstrip("/").endswith(str(folder).rstrip("/")):
            if how == "refused":
                raise OSError(errno.EPERM, f"mount {target}: Operation not permitted")
            return None
        return real(source, target, fstype, flags, data)

    monkeypatch.setattr(confine, "_mount", mount)
    launch = jail.launcher(folder, mode=FOUND.mode)
    marker = folder / "exercises" / "ran"
    with pytest.raises(jail.LaunchError) as caught:
        launch([sys.executable, "-I", "-S", "-c", f"open({str(marker)!r}, 'w').close()"])
    said = str(caught.value)
    assert f"({FOUND.mode})" in said and str(folder) in said, said
    assert ("could not be made read-only" if how == "refused" else "still writable") in said, said
    assert "not run" in said and not marker.exists()


@needs_mount_namespace
def test_the_stage_folder_is_mounted_read_only_wherever_tmpdir_is(folder):
    """The measured case for real: .ci/jail-setups runs this file as an unprivileged user with
    TMPDIR on a ``noexec`` tmpfs, where the remount must keep ``noexec`` to be allowed at all."""
    noexec = bool(os.statvfs(folder).f_flag & os.ST_NOEXEC)
    seen = probe(folder, REACH % {"judge": os.getpid()})
    assert seen["folder_read_only"] and seen["read_own"] == "allowed", (noexec, seen)


@needs_mount_namespace
def test_a_stage_folder_on_a_noexec_mount_is_bound_read_only(tmp_path):
    """The same on a noexec tmpfs mounted here (root only; as root the kernel locks nothing)."""
    if not jail.is_root():
        pytest.skip("mounting a tmpfs needs root")
    place = tmp_path / "noexec"
    place.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "noexec,nosuid,nodev,size=8m", "tmpfs", str(place)], check=True)
    try:
        folder = place / "stage"
        (folder / "exercises").mkdir(parents=True)
        (folder / "exercises" / "__init__.py").write_text("")
        for path in (place, folder, folder / "exercises"):
            os.chmod(path, 0o755)
        seen = probe(folder, REACH % {"judge": os.getpid()})
        assert seen["read_own"] == "allowed" and seen["folder_read_only"], seen
    finally:
        subprocess.run(["umount", "-l", str(place)], check=False)


# --- a grader killed by its platform's timeout ------------------------------------------------

SLOW = "import time\ntime.sleep(4)\n"  # under the sandbox's import limit: every judge is running


def _judges(grader: int) -> set[int]:
    """The judges ``grader`` started (its children, or once it is dead, anyone's, by command line)."""
    found = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                line = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"--kata-results=" in line and parent == grader:
            found.add(int(entry))
    return found


def _alive(pids: set[int]) -> set[int]:
    found = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X"):
                    found.add(pid)
        except (OSError, IndexError):
            pass
    return found


def test_judges_and_their_stage_folders_go_with_a_killed_grader(tmp_path):
    folder = tmp_path / "student"
    for s in STAGES[:4]:
        path = folder / s.source("exercises")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(on_stub(s.number, SLOW), encoding="utf-8")
    stages = [arg for s in STAGES[:4] for arg in ("--stage", str(s.number))]
    grader = subprocess.Popen([sys.executable, "-m", "autograd_kata", "grade", "--submission", str(folder), *stages,
                               "--format", "json", "--out", str(tmp_path / "r.json")], cwd=Path(__file__).parent.parent,
                              env={**os.environ, "KATA_IMPL": ""}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(_judges(grader.pid)) < 2:
        time.sleep(0.05)
    judges = _judges(grader.pid)
    assert judges, "no judge started"
    time.sleep(1)  # their sandboxes are importing
    left = set(os.listdir(jailroot.path() / jailroot.STAGES)) if FOUND.mode == "chroot" else set()
    scratch = {_scratch_of(pid) for pid in judges}  # the grader's folder: the submission's copies
    assert len(scratch) == 1 and next(iter(scratch)).name.startswith("kata-grade-"), scratch
    os.kill(grader.pid, signal.SIGKILL)  # what a platform's timeout does
    grader.wait()
    time.sleep(2)  # issue 26's bound: 2 s after the kill, nothing of the grading runs
    assert not _alive(judges), "a judge outlived its grader"
    assert not sandboxes_alive()
    # the next grading's start removes what the killed one left (in chroot, in the jail's root too)
    proc = kata("grade", "--submission", str(folder), "--stage", "1", "--format", "json",
                "--out", str(tmp_path / "next.json"))
    assert proc.returncode == 1, proc.stderr
    assert not left & set(os.listdir(jailroot.path() / jailroot.STAGES)) if left else True
    assert not any(path.exists() for path in scratch), scratch


def test_the_sweep_removes_only_a_dead_graders_folder(tmp_path):
    """A live grading's folder (its lock held), a folder without the lock (another tool's, or an
    older grader's) and anything not named as a grading's are left; a dead grader's goes."""
    from autograd_kata.classroom.grading import folders
    made = {name: tmp_path / name for name in ("kata-grade-live", "kata-grade-dead", "kata-grade-nolock", "other")}
    for folder in made.values():
        (folder / "stage01").mkdir(parents=True)
    for name in ("kata-grade-dead", "other"):
        (made[name] / folders.HELD).write_text("")
    with folders.hold(made["kata-grade-live"]):
        assert folders.sweep(str(tmp_path)) == ["kata-grade-dead"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kata-grade-live", "kata-grade-nolock", "other"]
    assert folders.sweep(str(tmp_path)) == ["kata-grade-live"]  # its grader is gone now



@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock is POSIX's; graders are Linux")
def test_a_grading_that_starts_while_another_is_locking_its_folder_leaves_it(tmp_path, monkeypatch):
    """Measured (.ci/jail-setups, three gradings at once): one grading's start swept another's
    folder away ("the grader failed: FileNotFoundError") because the lock file existed, unlocked,
    between its making and its locking.  Here a sweep runs in exactly that moment: the folder stays."""
    import fcntl

    from autograd_kata.classroom.grading import folders
    live = tmp_path / "kata-grade-starting"
    live.mkdir()
    swept, real = [], fcntl.flock

    def sweep_first(fd, op):
        if op == fcntl.LOCK_EX and not swept:  # the holder's lock, not the sweep's (LOCK_NB)
            swept.append(folders.sweep(str(tmp_path)))
        return real(fd, op)
    monkeypatch.setattr(fcntl, "flock", sweep_first)
    with folders.hold(live):
        assert swept == [[]] and live.is_dir(), swept
        monkeypatch.setattr(fcntl, "flock", real)
        assert folders.sweep(str(tmp_path)) == [] and live.is_dir()


def _scratch_of(judge: int) -> Path:
    with open(f"/proc/{judge}/cmdline", "rb") as f:
        results = next(a for a in f.read().split(b"\0") if a.startswith(b"--kata-results="))
    return Path(os.fsdecode(results.split(b"=", 1)[1])).parent.parent


# --- the chroot jail's root, checked before every grading ------------------------------------

@pytest.mark.skipif(not jail.is_root(), reason="the jail root is root's to make")
def test_a_jail_root_anyone_but_root_could_change_is_set_aside_and_made_again(tmp_path, monkeypatch):
    """docs/instructors.md: nothing in the copy may be writable or belong to anyone but root (nor
    be set-ID, a device or a FIFO); a copy that fails the check is moved aside and made again."""
    import stat
    monkeypatch.setenv(jailroot.ENV_BASE, str(tmp_path / "base"))
    root = jailroot.ready()
    victim = next(root.rglob("json/__init__.py"))
    mode = stat.S_IMODE(victim.stat().st_mode)
    for spoil, undo in ((lambda: os.chmod(victim, 0o666), lambda: os.chmod(victim, mode)),
                        (lambda: os.chown(victim, 4242, 0), lambda: os.chown(victim, 0, 0)),
                        (lambda: os.chmod(victim, mode | stat.S_ISUID), lambda: os.chmod(victim, mode)),
                        (lambda: os.mkfifo(victim.with_name("fifo")), lambda: victim.with_name("fifo").unlink())):
        spoil()
        with pytest.raises(jailroot.JailBroken):
            jailroot.check(root)
        undo()
        jailroot.check(root)
    os.chmod(victim.parent, 0o777)
    again = jailroot.ready()
    assert again == root and stat.S_IMODE(next(again.rglob("json/__init__.py")).parent.stat().st_mode) == 0o755
    assert [p.name.split(".bad-")[0] for p in root.parent.glob(root.name + ".bad-*")] == [root.name]


# --- what the root's set-ups show --------------------------------------------------------------

SEE = r'''
import json, os
seen = {p: os.path.exists(p) for p in %(paths)r}
import decimal, json, ctypes, sqlite3, zlib  # the standard library, its C modules included
print(json.dumps(seen))
'''


@pytest.mark.skipif(FOUND.mode not in ("namespaces", "chroot"), reason=f"the jail root's copy is root's: {FOUND.mode}")
def test_the_root_set_ups_show_the_standard_library_and_no_site_packages(folder):
    """``namespaces`` binds the chroot mode's read-only copy as its system (issue 26: it showed
    all of /usr and the interpreter's site-packages)."""
    import sysconfig
    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    paths = [base["purelib"], base["platlib"], "/usr/share", "/usr/include", "/etc/passwd", "/usr/bin/env",
             base["stdlib"] + "/json/__init__.py"]
    seen = probe(folder, SEE % {"paths": paths})
    assert seen == {**dict.fromkeys(paths, False), base["stdlib"] + "/json/__init__.py": True}, seen


def test_every_refusal_the_guide_claims_names_a_test_that_exists():
    """docs/instructors.md's table of what each set-up was measured to refuse: no claim without
    a test (each row's last cell names it, ``the same``: the row's above)."""
    import re
    here = Path(__file__).parent
    rows = [line for line in (here.parent / "docs" / "instructors.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| ") and line.count("|") == 7 and " | namespaces |" not in line]
    assert len(rows) >= 15, "the guide's table of refusals"
    named, last = [], None
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert set(cells[1:5]) <= {"yes", "-"}, row
        found = re.findall(r"`(test_\w+\.py)?::(test_\w+)`", cells[5])
        assert found or (cells[5] == "the same" and last), row
        for file, test in found or []:
            last = file or last
            named.append((last, test))
    missing = [f"{f}::{t}" for f, t in named if f"\ndef {t}(" not in (here / f).read_text(encoding="utf-8")]
    assert not missing, missing
