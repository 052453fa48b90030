"""The chroot jail's root: a read-only copy of what the interpreter needs, made once per machine.

Used where the grader is root but may not make a mount namespace (a grading
container with Docker's default capabilities: ``CAP_SYS_CHROOT``, ``CAP_SETUID``
and ``CAP_SETGID``, no ``CAP_SYS_ADMIN``).  ``ready()`` returns the root,
preparing it the first time (``/var/lib/kata-sandbox/root-<key>``, the key from
the interpreter's path and build) and checking it every time:

* it holds, at their own paths, the base interpreter, every shared library a
  probe interpreter maps after importing every extension module of the
  standard library (the dynamic loader included), ``/etc/ld.so.cache``, and
  the standard library itself without ``site-packages``, tests, IDLE, Tk and
  the build configuration: about 60 MB, a second or two to copy;
* every entry belongs to root and no one else may write it, no entry is
  set-user-ID or set-group-ID, and there is no device, no ``/proc``, no
  ``/tmp``: the sandbox can write nowhere in it;
* ``stages/`` (0711) holds one folder per running stage, named by 128 random
  bits (``stage_folder()``), so a sandbox finds only the folder it was put in;
  its grader holds a lock on it (``stage-locks/``, beside the roots) until it
  removes it, and ``sweep_stages()`` (each grading's start) removes the folders
  no live grader holds: a grader killed by its platform's timeout leaves none.

``check()`` walks it before each grading (about 3,000 entries, ~30 ms); a root
that fails is moved aside and made again.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
import struct
import subprocess
import sys
import sysconfig
from pathlib import Path

try:  # POSIX only; the chroot jail is root's on Linux (on Windows kata grade refuses: commands.py)
    import fcntl
except ImportError:
    fcntl = None  # type: ignore[assignment]

BASE = "/var/lib/kata-sandbox"
ENV_BASE = "KATA_JAIL_BASE"  # another parent folder (the tool tests use it)
STAGES = "stages"
SKIP = {"site-packages", "dist-packages", "test", "tests", "idlelib", "tkinter", "turtledemo", "ensurepip",
        "lib2to3", "pydoc_data", "__phello__"}

PROBE = r"""
import importlib, os, sys
for name in sorted(os.listdir(sys.argv[1])):
    if name.endswith(".so"):
        try:
            importlib.import_module(name.split(".", 1)[0])
        except BaseException:
            pass
with open("/proc/self/maps") as f:
    print("\n".join(sorted({line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6})))
"""


def python() -> str:
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def _stdlib() -> tuple[str, str]:
    paths = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})
    return os.path.realpath(paths["stdlib"]), os.path.realpath(paths["platstdlib"])


def key() -> str:
    exe = python()
    st = os.stat(exe)
    text = f"{exe}\n{sys.version}\n{st.st_size}\n{st.st_mtime_ns}\n{_stdlib()}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def base() -> Path:
    return Path(os.environ.get(ENV_BASE) or BASE)


def path() -> Path:
    return base() / f"root-{key()}"


class JailBroken(Exception):
    """The root is not what the sandbox may be put in."""


def ready() -> Path:
    """The checked root, made first if need be; JailBroken if it cannot be made sound."""
    root = path()
    if root.is_dir():
        try:
            check(root)
            return root
        except JailBroken:
            os.replace(root, root.with_name(root.name + f".bad-{secrets.token_hex(4)}"))
    prepare(root)
    check(root)
    return root


def prepare(root: Path) -> None:
    parent = root.parent
    parent.mkdir(parents=True, exist_ok=True)
    os.chown(parent, 0, 0)
    os.chmod(parent, 0o755)
    tmp = parent / f".{root.name}.{secrets.token_hex(4)}"
    tmp.mkdir(mode=0o755)
    try:
        _fill(tmp)
        for folder, dirs, files in os.walk(tmp):
            for entry in [folder] + [os.path.join(folder, n) for n in dirs + files]:
                os.lchown(entry, 0, 0)
                st = os.lstat(entry)
                if not stat.S_ISLNK(st.st_mode):
                    os.chmod(entry, stat.S_IMODE(st.st_mode) & 0o755)
        os.chmod(tmp / STAGES, 0o711)
        os.replace(tmp, root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _place(tmp: Path, source: str) -> None:
    """``source`` at its own path under ``tmp``: every symbolic link on the way is made again
    as a link (and what it points to is placed too), directories as directories, the file copied."""
    parts = Path(source).parts[1:]
    real = Path("/")
    for i, part in enumerate(parts):
        here, inside = real / part, tmp.joinpath(*Path(real / part).parts[1:])
        if here.is_symlink():
            target = os.readlink(here)
            if not os.path.lexists(inside):
                inside.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(target, inside)
            rest = Path(*parts[i + 1:]) if i + 1 < len(parts) else None
            resolved = (here.parent / target)
            _place(tmp, os.path.normpath(str(resolved / rest if rest else resolved)))
            return
        if i == len(parts) - 1:
            if here.is_dir():
                inside.mkdir(parents=True, exist_ok=True)
            elif here.is_file() and not inside.exists():
                inside.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(here, inside)
        real = here


def interpreter(exe: str) -> str:
    """The dynamic loader an ELF executable names (PT_INTERP), as it names it."""
    with open(exe, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF":
            return exe
        little, wide = head[5] == 1, head[4] == 2
        order = "<" if little else ">"
        if wide:
            phoff, = struct.unpack(order + "Q", head[0x20:0x28])
            size, count = struct.unpack(order + "HH", head[0x36:0x3A])
        else:
            phoff, = struct.unpack(order + "I", head[0x1C:0x20])
            size, count = struct.unpack(order + "HH", head[0x2A:0x2E])
        for i in range(count):
            f.seek(phoff + i * size)
            ph = f.read(size)
            if struct.unpack(order + "I", ph[:4])[0] == 3:  # PT_INTERP
                offset, length = (struct.unpack(order + "Q", ph[8:16])[0], struct.unpack(order + "Q", ph[32:40])[0]) \
                    if wide else (struct.unpack(order + "I", ph[4:8])[0], struct.unpack(order + "I", ph[16:20])[0])
                f.seek(offset)
                return f.read(length).rstrip(b"\0").decode()
    return exe


def _fill(tmp: Path) -> None:
    stdlib, platstdlib = _stdlib()
    exe = python()
    dynload = os.path.join(platstdlib, "lib-dynload")
    probe = subprocess.run([exe, "-I", "-S", "-c", PROBE, dynload], capture_output=True, text=True, timeout=120,
                           check=True, env={"PATH": "/usr/bin:/bin"})
    files = [exe, interpreter(exe), "/etc/ld.so.cache"] + [p for p in probe.stdout.splitlines() if p.startswith("/")]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):  # a merged /usr: the loader's cache names /lib/... paths
            files.append(top)
    for source in list(files):  # the names the loader looks for (libffi.so.8) link to the mapped file
        folder = os.path.dirname(source)
        if source.endswith(".so") or ".so." in source:
            for name in os.listdir(folder) if os.path.isdir(folder) else []:
                link = os.path.join(folder, name)
                if os.path.islink(link) and os.path.realpath(link) == os.path.realpath(source):
                    files.append(link)
    for source in files:
        if (os.path.isfile(source) or os.path.islink(source)) and not source.startswith(("/proc", "/dev", "/sys")):
            _place(tmp, source)
    for folder in dict.fromkeys([stdlib, platstdlib]):
        _place(tmp, folder)
        inside = tmp / folder.lstrip("/")
        shutil.copytree(folder, inside, symlinks=True, dirs_exist_ok=True,
                        ignore=lambda d, names: [n for n in names if n in SKIP or n.startswith("config-")])
    (tmp / STAGES).mkdir()


def check(root: Path) -> None:
    """JailBroken unless every entry is root's, written by no one else, and not set-ID; and no
    device, socket or FIFO."""
    count = 0
    for folder, dirs, files in os.walk(root):
        if Path(folder) == root / STAGES:
            dirs[:] = []  # the running stages' folders: the grader's, made and removed per stage
        for entry in [folder] + [os.path.join(folder, n) for n in dirs + files]:
            st = os.lstat(entry)
            count += 1
            kind = stat.S_IFMT(st.st_mode)
            if st.st_uid != 0 or (kind != stat.S_IFLNK and st.st_mode & 0o7022) or \
                    kind not in (stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK):
                raise JailBroken(f"{entry}: owner {st.st_uid}, mode {stat.filemode(st.st_mode)}")
    if count < 100:
        raise JailBroken(f"{root} holds only {count} entries")


_HELD: dict[str, int] = {}  # stage folder -> the lock this process holds on it


def _lock(name: str) -> int:
    locks = base() / "stage-locks"
    locks.mkdir(mode=0o700, exist_ok=True)
    return os.open(locks / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)


def stage_folder(root: Path) -> Path:
    """A new folder for one stage, inside the root, that only its path finds; locked (first)
    until ``remove_stage``."""
    name = secrets.token_hex(16)
    fd = _lock(name)
    fcntl.flock(fd, fcntl.LOCK_EX)
    folder = root / STAGES / name
    folder.mkdir(mode=0o755)
    _HELD[str(folder)] = fd
    return folder


def _drop(folder: Path, fd: int) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    try:
        os.unlink(base() / "stage-locks" / f"{folder.name}.lock")
    except OSError:
        pass
    os.close(fd)


def remove_stage(folder: Path) -> None:
    """The stage folder and its lock gone."""
    fd = _HELD.pop(str(folder), None)
    if fd is None:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        _drop(Path(folder), fd)


def sweep_stages(root: Path) -> list[str]:
    """Remove every stage folder no live grader holds (a killed one's); their names."""
    removed = []
    place = root / STAGES
    for name in sorted(os.listdir(place)) if place.is_dir() else []:
        fd = _lock(name)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _drop(place / name, fd)
        removed.append(name)
    return removed


def inside(root: Path, folder) -> str:
    """``folder``'s path as the sandbox, chrooted into ``root``, sees it."""
    return "/" + str(Path(os.path.realpath(folder)).relative_to(os.path.realpath(root)))
