"""The judge side of grading: the submitted module, seen through a pipe.

``connect(module, folder)`` starts ``sandbox_server.py`` (through the jail's
``launch`` when grading) and returns a ``RemoteModule``: a proxy that behaves,
for the stage tests, like the module itself.  Only data crosses the pipe
(numbers, strings, bools, None, containers of them) and *handles* to objects
that stay in the sandbox; each handle has exactly one ``Proxy`` here, so
``is``, ``id()``, sets and dicts of proxies behave as they would locally.
Attribute access, calls, operators (reflected ones too), ``repr``, ``len``,
iteration and ``isinstance(x, engine.Value)`` are forwarded.

Every reply is hostile data: its size is bounded, its shape and types are
checked, a handle the sandbox never gave is refused, nothing is ever
``eval``-ed or unpickled (``values.py``; the proxies are ``proxy.py``'s). A
sandbox that hangs, dies or breaks the protocol is killed and every later
request raises ``SandboxError`` at once, so the first hang ends the stage. An
exception raised in the sandbox is raised here as the same builtin type, with
the same message and ``learner_frames``: the ``(file, line, text)`` of each
frame of the submitted file it went through.
"""
from __future__ import annotations

import ast
import inspect
import json
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from autograd_kata.classroom.sandbox import server
from autograd_kata.classroom.sandbox.proxy import NotSendable, RemoteError, RemoteModule
from autograd_kata.classroom.sandbox.values import MAX_FRAMES, MAX_LINE, MAX_MESSAGE, MAX_STRING, Codec, cut
from autograd_kata.core.i18n import t

__all__ = ["CALL_TIMEOUT", "MAX_FRAMES", "MAX_LINE", "MAX_MESSAGE", "MAX_STRING", "Client", "ImportFailed",
           "NotSendable", "RemoteError", "RemoteModule", "SandboxError", "connect", "cut"]

SERVER_SOURCE = Path(server.__file__).read_text(encoding="utf-8")
CALL_TIMEOUT = 6.0  # seconds per request; below pytest-timeout's 10 s, so our reason is the one shown
# the sandbox stops its own request at CALL_TIMEOUT, where it was looping; this long after, the judge kills it
GRACE = 1.0
MAX_FRAME = server.MAX_FRAME


# what a hang did not finish in time: an answer (or the import, ("sandbox.import_hung", {"file": ...}))
ANSWERING: tuple[str, dict] = ("sandbox.no_answer", {})

class SandboxError(BaseException):
    """The sandbox hung, died or broke the protocol.  A BaseException, so no
    ``except Exception`` in a test can take it for an error of the learner's code.
    ``kind`` (``results.KINDS``): "hang", "crash", or "not run" once it was stopped earlier.
    A hang that the sandbox stopped itself carries where (``learner_frames``) and its ``limit``."""

    def __init__(self, message, kind="crash", learner_frames=(), limit=None):
        super().__init__(message)
        self.kind, self.learner_frames, self.limit = kind, list(learner_frames), limit


class ImportFailed(Exception):
    """The submitted module did not import: ``kind``, ``message``, ``lineno``, ``learner_frames``."""

    def __init__(self, kind, message, lineno, frames):
        super().__init__(f"{kind}: {message}")
        self.kind, self.message, self.lineno, self.learner_frames = kind, message, lineno, frames


def default_launch(argv, **popen):
    """The sandbox as a plain child in its own session, with an empty environment (the judge's
    holds KATA_HIDDEN_SEED); grading uses ``jail.launcher(folder)`` instead."""
    return subprocess.Popen(argv, start_new_session=True, env={}, **popen)


def connect(module: str, folder, launch=None, call_timeout: float = CALL_TIMEOUT) -> RemoteModule:
    """Start a sandbox that imports ``module`` from ``folder``; raise ``ImportFailed`` if it does not import,
    ``SandboxError`` if the sandbox hangs, dies or breaks the protocol before it has said so.
    ``launch(argv, **popen_kwargs) -> Popen`` starts the process (``jail.launcher(folder)`` when grading)."""
    return Client(module, str(folder), launch or default_launch, call_timeout).module





class Client(Codec):
    """One sandbox process and its handle -> proxy table."""

    def __init__(self, module, folder, launch, timeout):
        self.timeout, self.dead, self.file = timeout, None, "/".join(module.split(".")) + ".py"
        self.proxies, self.next_handle, self.buffer, self.sources = {}, 2, bytearray(), {}
        folder = getattr(launch, "folder_inside", folder)  # where a chroot puts it
        self.proc = launch([sys.executable, "-I", "-S", "-c", SERVER_SOURCE, folder, module, f"{timeout!r}"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.wfd, self.rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.wfd, False)
        self.readable, self.writable = select.poll(), select.poll()
        self.readable.register(self.rfd, select.POLLIN)
        self.writable.register(self.wfd, select.POLLOUT)
        self.module = self.proxies[1] = RemoteModule(self, 1)  # the first handle is always the module
        importing = ("sandbox.import_hung", {"file": self.file})
        hello = self._receive(importing)
        if "hung" in hello:
            self._hung(hello["hung"], importing)
        if "error" in hello:
            error = self._exception(hello["error"])
            self.close()
            frames = error.learner_frames
            lineno = frames[-1][1] if frames and isinstance(error, SyntaxError) else None
            raise ImportFailed(type(error).__name__, str(error), lineno, frames)
        if self._decode(hello["ok"]) is not self.module:
            self._fail(t("sandbox.bad_hello"))

    # the pipe -----------------------------------------------------------------------------
    def request(self, function, *args, **kwargs):
        __tracebackhide__ = True
        if self.dead:
            raise SandboxError(t("sandbox.stopped_earlier", reason=self.dead), "not run")
        message = {"f": function, "a": [self._encode(a) for a in args],
                   "k": {k: self._encode(v) for k, v in kwargs.items()}}
        try:
            data = json.dumps(message).encode()
            self._send(len(data).to_bytes(4, "big") + data)
            reply = self._receive(ANSWERING)
            if "hung" in reply:
                self._hung(reply["hung"], ANSWERING)
            if "error" in reply:
                error = self._exception(reply["error"])
            else:
                return self._decode(reply["ok"])
        except SandboxError:
            raise
        except BaseException:  # pytest-timeout's signal, Ctrl-C: the pipe is out of step, so stop
            self._kill(t("sandbox.interrupted"))
            raise
        raise error

    def _fail(self, reason, kind="crash"):
        self._kill(reason)
        raise SandboxError(reason, kind)

    def _late(self, who) -> str:
        """Why a hang stopped: ``who`` (ANSWERING, or the import's) did not finish in time."""
        msgid, fields = who
        return t(msgid, seconds=f"{self.timeout:g}", **fields)

    def _hung(self, stopped, who):
        """The sandbox stopped the learner's code at its time limit: a hang, with where it was."""
        frames = self._exception(stopped).learner_frames
        reason = self._late(who)
        if frames and who[0] == "sandbox.import_hung":  # a test names the line itself (explain.hang); an import cannot
            path, line, code = frames[-1]
            where = t("crash.where_code", where=f"{path}:{line}", code=code) if code else f"{path}:{line}"
            reason = t("sandbox.import_hung_at", hung=reason, where=where)
        self._kill(reason)
        raise SandboxError(reason, "hang", frames, self.timeout)

    def _deadline_left(self, deadline, who):
        left = deadline - time.monotonic()
        if left <= 0:
            self._fail(self._late(who), "hang")
        return left

    def _send(self, data):
        deadline, view = time.monotonic() + self.timeout + GRACE, memoryview(data)
        while view:
            try:
                view = view[os.write(self.wfd, view):]
            except BlockingIOError:  # the pipe is full: the sandbox is not reading
                self.writable.poll(self._deadline_left(deadline, ANSWERING) * 1000)
            except OSError:
                self._ended()

    def _receive(self, who):
        deadline = time.monotonic() + self.timeout + GRACE
        size = None
        while True:
            if size is None and len(self.buffer) >= 4:
                size = int.from_bytes(self.buffer[:4], "big")
                if size > MAX_FRAME:
                    self._fail(f"the sandbox sent an answer of {size} bytes (at most {MAX_FRAME} are read)")
            if size is not None and len(self.buffer) >= 4 + size:
                frame = self.buffer[4:4 + size]
                del self.buffer[:4 + size]
                return self._reply(frame)
            left = self._deadline_left(deadline, who)
            if self.readable.poll(left * 1000):
                chunk = os.read(self.rfd, 1 << 16)
                if not chunk:
                    self._ended()
                self.buffer += chunk

    def _ended(self):
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            how = t("sandbox.how_closed")
        elif code < 0:
            how = t("sandbox.how_killed_by", signal=signal.Signals(-code).name) if -code in signal.valid_signals() \
                else t("sandbox.how_killed")
        else:
            how = t("sandbox.how_exited", code=code)
        self._fail(t("sandbox.ended", how=how))

    def _reply(self, frame):
        try:
            reply = json.loads(frame)
        except (ValueError, RecursionError):
            self._fail(t("sandbox.bad_json"))
        if type(reply) is not dict or len(reply) != 1 or not ({"ok", "error", "hung"} & reply.keys()):
            self._fail(t("sandbox.bad_shape"))
        return reply

    def close(self):
        end, self.proc.kata_end = getattr(self.proc, "kata_end", None), None
        if end:
            end()  # the jail's: the sandbox killed, its uid cleaned (processes, IPC) and given back
        elif self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for pipe in (self.proc.stdin, self.proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass

    def _kill(self, reason):
        self.dead = self.dead or reason
        self.close()

    # code the judge wrote, run where the engine lives (tests/expect.py: in_engine) ----------
    def call_source(self, fn, args):
        """Ship ``fn``'s source (its decorators dropped), run it in the sandbox as ``fn(module, *args)``."""
        text = self.sources.get(fn)
        if text is None:
            if fn.__code__.co_freevars:
                raise TypeError(f"@in_engine function {fn.__name__} uses {', '.join(fn.__code__.co_freevars)} "
                                f"of the function around it: only its arguments cross to the sandbox")
            source = textwrap.dedent(inspect.getsource(fn))
            node = ast.parse(source).body[0]
            text = self.sources[fn] = "".join(source.splitlines(keepends=True)[node.lineno - 1:node.end_lineno])
        return self.request("source", text, fn.__name__, *args)
