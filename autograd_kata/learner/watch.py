"""``kata watch``: re-run a stage's tests every time a file in ``exercises/`` is saved.

File events come from watchdog when it is installed; a poll of the files'
modification times runs beside it, so a file system that delivers no events
(network drives, some containers) still works, and ``--poll`` /
``KATA_WATCH_POLL=1`` (or a missing watchdog) uses the poll alone.  Editors
often write a file several times per save: a change starts a short quiet
period, and the tests run once the files stop changing.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

from autograd_kata.core.i18n import t
from autograd_kata.core.manifest import STAGES, Stage
from autograd_kata.core.term import cursor_ok, say
from autograd_kata.learner.feedback import first_unfinished, make_style, report, results, title
from autograd_kata.learner.feel import feel

POLL_INTERVAL = 0.5   # seconds between two looks at the files
DEBOUNCE = 0.3        # quiet time after the last change before the tests run
WRITES = {"modified", "created", "moved", "deleted", "closed"}  # watchdog events that mean a save


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Each Python file's (modification time, size): a cheap fingerprint of the folder."""
    found = {}
    try:
        for path in folder.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            try:
                info = path.stat()
            except OSError:
                continue
            found[str(path)] = (info.st_mtime_ns, info.st_size)
    except OSError:
        pass
    return found


def start_observer(folder: Path, changed: threading.Event):
    """A watchdog observer that sets ``changed`` on every Python file event; None without watchdog."""
    try:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer
    except ImportError:
        return None

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event):
            # Reading a file (pytest does) raises "opened" and "closed_no_write" events: not a save.
            if event.event_type not in WRITES:
                return
            paths = [getattr(event, "src_path", ""), getattr(event, "dest_path", "")]
            if any(str(p).endswith(".py") for p in paths if p):
                changed.set()

    observer = Observer()
    observer.daemon = True
    try:
        observer.schedule(Handler(), str(folder), recursive=True)
        observer.start()
    except Exception:  # noqa: BLE001 - e.g. out of inotify watches: polling still works
        return None
    return observer


def wait_for_change(folder: Path, changed: threading.Event, seen: dict) -> dict:
    """Block until the files differ from ``seen`` (or an event fires) and then stay quiet
    for ``DEBOUNCE`` seconds; return the new snapshot."""
    while True:
        fired = changed.wait(POLL_INTERVAL)
        now = snapshot(folder)
        if fired or now != seen:
            break
    while True:  # debounce: wait until nothing changes for a moment
        changed.clear()
        time.sleep(DEBOUNCE)
        later = snapshot(folder)
        if not changed.is_set() and later == now:
            return later
        now = later


def watch(root: Path, given: Stage | None, poll: bool = False) -> int:
    style = make_style()
    folder = root / "exercises"
    poll = poll or bool(os.environ.get("KATA_WATCH_POLL"))
    changed = threading.Event()
    observer = None if poll else start_observer(folder, changed)
    how = t("watch.file_events") if observer else t("watch.polling")
    clear = cursor_ok(sys.stdout)  # never on TERM=dumb or a pipe
    target = given
    try:
        seen = snapshot(folder)
        while True:
            if target is None:
                target = first_unfinished(results(STAGES, root, overview=True))
            if clear:
                sys.stdout.write("\033[2J\033[H")  # a fresh screen for the latest result
            stamp = time.strftime("%H:%M:%S")
            if target is None:
                say(style.green(f"{style.tick} {t('watch.all_pass', stamp=stamp)}"))
            else:
                say(style.dim(t("watch.head", n=target.number, title=title(target), stamp=stamp)))
                result = results([target], root)[target.number]
                ok = report(result, root, style, feel=lambda s: feel(s, root))
                if ok and given is None:
                    target = first_unfinished(results(STAGES, root, overview=True))
                    if target is not None:  # run it now, below the pass, not at the next save
                        say(style.bold(t("watch.now", n=target.number, title=title(target),
                                         file=target.source("exercises"))))
                        say("")
                        report(results([target], root)[target.number], root, style, feel=lambda s: feel(s, root))
            say(style.dim(t("watch.waiting", how=how)))
            seen = wait_for_change(folder, changed, seen)
    except KeyboardInterrupt:
        say("\n" + t("watch.stopped"))
        return 0
    finally:
        if observer is not None:
            observer.stop()
            observer.join(timeout=2)

