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
``eval``-ed or unpickled.  A sandbox that hangs, dies or breaks the protocol
is killed and every later request raises ``SandboxError`` at once, so the
first hang ends the stage.  An exception raised in the sandbox is raised here
as the same builtin type, with the same message and ``learner_frames``: the
``(file, line, text)`` of each frame of the submitted file it went through.
"""
from __future__ import annotations

import ast
import builtins
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
from typing import Any

from autograd_kata.classroom.sandbox import server
from autograd_kata.core.i18n import t

SERVER_SOURCE = Path(server.__file__).read_text(encoding="utf-8")
CALL_TIMEOUT = 6.0  # seconds per request; below pytest-timeout's 10 s, so our reason is the one shown
# the sandbox stops its own request at CALL_TIMEOUT, where it was looping; this long after, the judge kills it
GRACE = 1.0
MAX_FRAME, MAX_DEPTH = server.MAX_FRAME, server.MAX_DEPTH + 2
# what the judge keeps of the sandbox's data, whatever it sends (a grading of the reference
# holds at most ~1,700 objects and its longest message is a few hundred characters)
MAX_HANDLES = 200_000   # objects of one sandbox the judge holds a proxy for
MAX_STRING = 64 << 10   # characters of one string in an answer
MAX_MESSAGE = server.MAX_MESSAGE  # characters of an exception's message (and of each of its arguments)
MAX_FRAMES, MAX_LINE = 20, 300  # the learner's frames an exception carries, characters of each line
SCALARS = server.SCALARS
CONSTANTS = server.CONSTANTS
BUILTIN_ERRORS = {name: kind for name, kind in vars(builtins).items()
                  if isinstance(kind, type) and issubclass(kind, Exception)}


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


class RemoteError(Exception):
    """Base of exceptions whose type is not a builtin one (named after the remote type)."""


class ImportFailed(Exception):
    """The submitted module did not import: ``kind``, ``message``, ``lineno``, ``learner_frames``."""

    def __init__(self, kind, message, lineno, frames):
        super().__init__(f"{kind}: {message}")
        self.kind, self.message, self.lineno, self.learner_frames = kind, message, lineno, frames


class NotSendable(TypeError):
    """A local object that cannot cross to the sandbox (only data and proxies can)."""


def default_launch(argv, **popen):
    """The sandbox as a plain child in its own session, with an empty environment (the judge's
    holds KATA_HIDDEN_SEED); grading uses ``jail.launcher(folder)`` instead."""
    return subprocess.Popen(argv, start_new_session=True, env={}, **popen)


def connect(module: str, folder, launch=None, call_timeout: float = CALL_TIMEOUT) -> RemoteModule:
    """Start a sandbox that imports ``module`` from ``folder``; raise ``ImportFailed`` if it does not import,
    ``SandboxError`` if the sandbox hangs, dies or breaks the protocol before it has said so.
    ``launch(argv, **popen_kwargs) -> Popen`` starts the process (``jail.launcher(folder)`` when grading)."""
    return Client(module, str(folder), launch or default_launch, call_timeout).module


cut = server.cut  # text if short enough, else its start and a note of how much was cut


def _name(text, fallback):
    return text if isinstance(text, str) and text.isidentifier() and len(text) <= 100 else fallback


_CLASSES: dict = {}


def _proxy_class(name):
    """A Proxy subclass named after the remote type, so ``type(x).__name__`` reads as it would locally."""
    name = _name(name, "Proxy")
    if name not in _CLASSES and len(_CLASSES) < 1000:
        _CLASSES[name] = type(name, (Proxy,), {"__slots__": (), "__module__": "sandbox"})
    return _CLASSES.get(name, Proxy)


def _remote_error(name, base):
    key = (name, base)
    if key not in _CLASSES and len(_CLASSES) >= 1000:  # a sandbox inventing names without end
        return RemoteError
    if key not in _CLASSES:
        bases = (RemoteError,) if base is Exception else (RemoteError, base)
        try:
            _CLASSES[key] = type(name, bases, {"__module__": "sandbox"})
        except TypeError:  # a builtin base whose layout cannot be mixed in
            _CLASSES[key] = type(name, (RemoteError,), {"__module__": "sandbox"})
    return _CLASSES[key]


class Client:
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

    # values -------------------------------------------------------------------------------
    def _encode(self, x, depth=0):
        kind = type(x)
        if kind in SCALARS:
            return x
        if issubclass(kind, Proxy):
            if object.__getattribute__(x, "_kata_client") is not self:
                raise NotSendable("an object of another sandbox cannot be sent to this one")
            return {"H": object.__getattribute__(x, "_kata_handle")}
        if depth < MAX_DEPTH:
            if kind is list:
                return [self._encode(i, depth + 1) for i in x]
            if kind in (tuple, set, frozenset):
                return {server.TAGS[kind]: [self._encode(i, depth + 1) for i in x]}
            if kind is dict:
                return {"D": [[self._encode(k, depth + 1), self._encode(v, depth + 1)] for k, v in x.items()]}
        for word, constant in CONSTANTS.items():
            if x is constant:
                return {"C": word}
        raise NotSendable(f"a {kind.__name__} cannot be sent to the sandbox: only numbers, strings, None, "
                          f"containers of them and the sandbox's own objects cross; code that needs it "
                          f"goes in an @in_engine function")

    def _decode(self, x, depth=0):
        kind = type(x)
        if kind is str and len(x) > MAX_STRING:
            return cut(x, MAX_STRING)
        if kind in SCALARS:
            return x
        if depth > MAX_DEPTH:
            self._fail(t("sandbox.too_deep"))
        if kind is list:
            return [self._decode(i, depth + 1) for i in x]
        if kind is dict and "H" in x and x.keys() <= {"H", "c"} and type(x["H"]) is int:
            return self._proxy(x["H"], x.get("c"))
        if kind is dict and len(x) == 1:
            (tag, body), = x.items()
            if tag == "C" and body in CONSTANTS:
                return CONSTANTS[body]
            if type(body) is list:
                items = [self._decode(i, depth + 1) for i in body]
                try:
                    if tag in ("T", "S", "F"):
                        return {"T": tuple, "S": set, "F": frozenset}[tag](items)
                    if tag == "D" and all(type(i) is list and len(i) == 2 for i in items):
                        return dict(items)
                except TypeError:  # an unhashable key or member
                    pass
        self._fail(f"the sandbox's answer holds something that is not a value ({str(x)[:60]})")

    def _proxy(self, handle, kind):
        proxy = self.proxies.get(handle)
        if proxy is None:
            if handle != self.next_handle:
                self._fail(f"the sandbox's answer names object {handle}, which it never gave")
            if handle > MAX_HANDLES:
                self._fail(f"the sandbox handed out more than {MAX_HANDLES} objects")
            self.next_handle += 1
            proxy = self.proxies[handle] = _proxy_class(kind)(self, handle)
        return proxy

    def _exception(self, e):
        """The sandbox's exception as a local one: the same builtin type (a non-builtin type
        becomes a RemoteError subclass of that name and of its nearest builtin base)."""
        shape = {"type": str, "builtin": str, "args": list, "message": str, "frames": list}
        if type(e) is not dict or e.keys() != shape.keys() or any(type(e[k]) is not t for k, t in shape.items()):
            self._fail(t("sandbox.bad_error"))
        frames = [(cut(f[0], MAX_LINE), f[1], cut(f[2], MAX_LINE)) for f in e["frames"][-MAX_FRAMES:]
                  if type(f) is list and len(f) == 3 and [type(i) for i in f] == [str, int, str]]
        e["message"] = cut(e["message"], MAX_MESSAGE)
        args = e["args"] if all(type(a) in SCALARS for a in e["args"]) and len(e["args"]) <= 8 else [e["message"]]
        args = [cut(a, MAX_MESSAGE) if type(a) is str else a for a in args]
        name, base = _name(e["type"], "RemoteError"), BUILTIN_ERRORS.get(e["builtin"], Exception)
        kind = base if BUILTIN_ERRORS.get(name) is base else _remote_error(name, base)
        error: Any
        try:
            error = kind(*args)
        except Exception:  # noqa: BLE001 - a builtin whose constructor wants other arguments
            error = _remote_error(name, Exception)(e["message"])
        error.learner_frames = frames
        return error

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


def _binary(name):
    def forward(self, other):
        __tracebackhide__ = True
        try:
            return _client(self).request(name, self, other)
        except NotSendable:
            return NotImplemented

    def reflected(self, other):
        __tracebackhide__ = True
        try:
            return _client(self).request(name, other, self)
        except NotSendable:
            return NotImplemented
    return forward, reflected


def _call(name, check=None):
    def forward(self, *args):
        __tracebackhide__ = True
        result = _client(self).request(name, self, *args)
        if check is not None and type(result) is not check:
            raise TypeError(f"the sandbox's {name}() gave a {type(result).__name__}, not a {check.__name__}")
        return result
    return forward


def _client(proxy) -> Client:
    return object.__getattribute__(proxy, "_kata_client")


class Proxy:
    """An object that lives in the sandbox.  Everything but identity is asked of it."""

    __slots__ = ("_kata_client", "_kata_handle", "__weakref__")

    def __init__(self, client, handle):
        object.__setattr__(self, "_kata_client", client)
        object.__setattr__(self, "_kata_handle", handle)

    def __getattr__(self, name):
        __tracebackhide__ = True
        if name.startswith("_kata_"):
            raise AttributeError(name)
        return _client(self).request("getattr", self, name)

    def __setattr__(self, name, value):
        __tracebackhide__ = True
        _client(self).request("setattr", self, name, value)

    def __delattr__(self, name):
        __tracebackhide__ = True
        _client(self).request("delattr", self, name)

    def __call__(self, *args, **kwargs):
        __tracebackhide__ = True
        return _client(self).request("call", self, *args, **kwargs)

    __hash__ = object.__hash__  # identity, as for a Value that does not define __eq__
    __repr__, __str__, __format__ = _call("repr", str), _call("str", str), _call("format", str)
    __len__, __bool__, __float__ = _call("len", int), _call("bool", bool), _call("float", float)
    __int__, __index__, __round__ = _call("int", int), _call("index", int), _call("round")
    __contains__, __getitem__ = _call("contains", bool), _call("getitem")
    __setitem__, __delitem__, __dir__ = _call("setitem"), _call("delitem"), _call("dir", list)
    __neg__, __pos__, __abs__, __invert__ = _call("neg"), _call("pos"), _call("abs"), _call("invert")
    __eq__, _ = _binary("eq")
    __ne__, _ = _binary("ne")
    __lt__, _ = _binary("lt")
    __le__, _ = _binary("le")
    __gt__, _ = _binary("gt")
    __ge__, _ = _binary("ge")
    __add__, __radd__ = _binary("add")
    __sub__, __rsub__ = _binary("sub")
    __mul__, __rmul__ = _binary("mul")
    __truediv__, __rtruediv__ = _binary("truediv")
    __floordiv__, __rfloordiv__ = _binary("floordiv")
    __mod__, __rmod__ = _binary("mod")
    __pow__, __rpow__ = _binary("pow")
    __matmul__, __rmatmul__ = _binary("matmul")
    __and__, __rand__ = _binary("and_")
    __or__, __ror__ = _binary("or_")
    __xor__, __rxor__ = _binary("xor")
    __lshift__, __rlshift__ = _binary("lshift")
    __rshift__, __rrshift__ = _binary("rshift")
    del _

    def __iter__(self):
        __tracebackhide__ = True
        client = _client(self)
        iterator = client.request("iter", self)
        while True:
            try:
                yield client.request("next", iterator)
            except StopIteration:
                return

    def __instancecheck__(self, obj):  # isinstance(x, engine.Value): self is the remote class
        __tracebackhide__ = True
        try:
            return _client(self).request("isinstance", obj, self) is True
        except NotSendable:
            return False  # a local object is no instance of a sandbox class

    def __subclasscheck__(self, cls):
        __tracebackhide__ = True
        try:
            return _client(self).request("issubclass", cls, self) is True
        except NotSendable:
            return False

    def __mro_entries__(self, bases):
        raise TypeError("a class in a test cannot subclass a class of the sandbox: define it inside an "
                        "@in_engine function (tests/expect.py), which runs where the engine lives")


for _op in "add sub mul truediv floordiv mod pow matmul lshift rshift and or xor".split():
    setattr(Proxy, f"__i{_op}__", _binary(f"i{_op}")[0])  # a += b: the sandbox's own in-place rule
del _op


class RemoteModule(Proxy):
    """The submitted module; ``__kata_remote__`` is its Client (for ``expect.in_engine``)."""

    __slots__ = ()

    @property
    def __kata_remote__(self) -> Client:
        return _client(self)
