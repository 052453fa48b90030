"""What crosses the judge's pipe, read and written on the judge's side.

Every reply is hostile data: its depth, its strings and the handles it may name are bounded,
a handle the sandbox never gave is refused, nothing is ever ``eval``-ed or unpickled.  An
exception the sandbox describes becomes a local one of the same builtin type (``_exception``).
``Codec`` is the ``Client``'s (``remote.py``) half that knows values; the pipe is the other.
"""
from __future__ import annotations

import builtins
from typing import Any, NoReturn

from autograd_kata.classroom.sandbox import server
from autograd_kata.classroom.sandbox.proxy import NotSendable, Proxy, proxy_class, remote_error, type_name
from autograd_kata.core.i18n import t

MAX_DEPTH = server.MAX_DEPTH + 2
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
cut = server.cut  # text if short enough, else its start and a note of how much was cut


class Codec:
    """Values to and from the sandbox, for one client: its handle -> proxy table."""

    proxies: dict[int, Proxy]
    next_handle: int

    def _fail(self, reason, kind="crash") -> NoReturn:
        raise NotImplementedError  # the Client's: the sandbox killed, then SandboxError

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
            proxy = self.proxies[handle] = proxy_class(kind)(self, handle)
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
        name, base = type_name(e["type"], "RemoteError"), BUILTIN_ERRORS.get(e["builtin"], Exception)
        kind = base if BUILTIN_ERRORS.get(name) is base else remote_error(name, base)
        error: Any
        try:
            error = kind(*args)
        except Exception:  # noqa: BLE001 - a builtin whose constructor wants other arguments
            error = remote_error(name, Exception)(e["message"])
        error.learner_frames = frames
        return error
