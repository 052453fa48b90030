"""The sandbox side of grading: import the submitted module, answer questions about it.

Run as ``python -I -S sandbox_server.py FOLDER MODULE`` (or with this file's
text after ``-c``): isolated mode, no ``site``, standard library only.  It
imports ``MODULE`` (``exercises.stage04_tanh``) from ``FOLDER`` and then serves
the judge (``remote.py``) over its stdin/stdout pipes.

Protocol: every message is a 4-byte big-endian length, then that many bytes of
UTF-8 JSON (NaN and infinities allowed).  The first message is the server's:
``{"ok": <the module>}`` or ``{"error": <exception>}`` when the import failed.
Then each request ``{"f": NAME, "a": [args], "k": {kwargs}}`` gets one reply,
``{"ok": value}`` or ``{"error": {"type", "builtin", "args", "message", "frames"}}``,
or ``{"hung": <the same>}`` when the answer took longer than the server's time limit
(its optional third argument, seconds): the learner's code is stopped where it was
looping (a SIGALRM between two bytecodes), and its frames say where.

Values: None, bools, ints, floats, strings and lists are themselves; other
things are one-key objects: ``{"T": [..]}`` tuple, ``{"S": [..]}`` set,
``{"F": [..]}`` frozenset, ``{"D": [[k, v], ..]}`` dict, ``{"C": "NotImplemented"}``,
and ``{"H": n, "c": "ClassName"}``: a handle to an object that stays here.
Handles are numbered 1, 2, 3... in the order they first appear in replies,
depth first, so the judge can refuse a number it was never given.

The learner's code may print: the protocol runs on private copies of the
original stdin/stdout, and fd 1 is pointed at stderr (fd 0 at an empty pipe).
"""
import builtins
import importlib
import json
import operator
import os
import signal
import sys
import traceback
from typing import Any

MAX_FRAME = 1 << 20   # bytes, both directions (a grading's largest answer is under 10 KB)
MAX_DEPTH = 32        # deeper containers travel as handles
MAX_MESSAGE = 2000    # characters of an exception's message, and of each string argument, sent
SCALARS = (type(None), bool, int, float, str)
TAGS: dict[type, str] = {tuple: "T", set: "S", frozenset: "F"}
CONSTANTS = {"NotImplemented": NotImplemented, "Ellipsis": Ellipsis}


class Hung(BaseException):
    """The time limit of one answer ran out (a BaseException: a learner's ``except Exception``
    in the loop does not catch it)."""


def _hung(signum, frame):
    raise Hung("the time limit ran out")


class Server:
    def __init__(self, folder, name, limit=None):
        self.folder, self.name, self.limit = folder, name, limit
        self.file = os.path.realpath(os.path.join(folder, *name.split("."))) + ".py"
        self.objects = [None]  # handle n -> object; holding them keeps every id() unique
        self.handles = {}      # id(object) -> handle
        self.functions = dict(FUNCTIONS, source=self.source)

    # values ----------------------------------------------------------------------------
    def encode(self, x, depth=0):
        kind = type(x)
        if kind in SCALARS:
            return x
        if depth < MAX_DEPTH:
            if kind is list:
                return [self.encode(i, depth + 1) for i in x]
            if kind in (tuple, set, frozenset):
                tag = TAGS[kind]
                return {tag: [self.encode(i, depth + 1) for i in x]}
            if kind is dict:
                return {"D": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in x.items()]}
        for word, constant in CONSTANTS.items():
            if x is constant:
                return {"C": word}
        handle = self.handles.get(id(x))
        if handle is None:
            handle = self.handles[id(x)] = len(self.objects)
            self.objects.append(x)
        return {"H": handle, "c": kind.__name__}

    def decode(self, x):
        if type(x) is list:
            return [self.decode(i) for i in x]
        if type(x) is not dict:
            return x
        (tag, body), = x.items()
        if tag == "H":
            if not 0 < body < len(self.objects):
                raise LookupError(f"the sandbox has no object number {body}")
            return self.objects[body]
        if tag == "C":
            return CONSTANTS[body]
        if tag == "D":
            return {self.decode(k): self.decode(v) for k, v in body}
        return {"T": tuple, "S": set, "F": frozenset}[tag](self.decode(i) for i in body)

    def describe(self, error):
        """An exception as data: its type, its nearest builtin type, its message,
        and the frames of the submitted file it passed through."""
        kind = type(error)
        builtin = next((c.__name__ for c in kind.__mro__ if c.__module__ == "builtins"), "Exception")
        try:
            message = cut(str(error))
        except BaseException:  # noqa: BLE001 - a learner's __str__ may fail too
            message = "<the message could not be read>"
        args = list(error.args) if all(type(a) in SCALARS for a in error.args) else [message]
        args = [cut(a) if type(a) is str else a for a in args[:8]]
        relative = os.path.join(*self.name.split(".")) + ".py"
        frames = [[relative, f.lineno, f.line or ""] for f in traceback.extract_tb(error.__traceback__)
                  if os.path.realpath(f.filename) == self.file]
        if isinstance(error, SyntaxError) and error.filename and os.path.realpath(error.filename) == self.file:
            frames.append([relative, error.lineno or 0, (error.text or "").strip()])
        return {"type": kind.__name__, "builtin": builtin, "args": args, "message": message, "frames": frames[-20:]}

    # requests --------------------------------------------------------------------------
    def source(self, text, name, *args):
        """Run a judge-written function (``@in_engine``) here, on the module."""
        namespace: dict = {"__builtins__": builtins, "__name__": "kata_in_engine"}
        exec(compile(text, f"<judge: {name}>", "exec"), namespace)
        return namespace[name](self.module, *args)

    def limited(self, function, *args, **kwargs):
        """``function(*args, **kwargs)``, stopped by ``Hung`` once it has run ``self.limit`` seconds."""
        if not self.limit:
            return function(*args, **kwargs)
        signal.signal(signal.SIGALRM, _hung)
        try:
            signal.setitimer(signal.ITIMER_REAL, self.limit)
            return function(*args, **kwargs)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def answer(self, request):
        try:
            function: Any = self.functions[request["f"]]
            args = [self.decode(a) for a in request["a"]]
            kwargs = {k: self.decode(v) for k, v in request["k"].items()}
            return {"ok": self.encode(self.limited(function, *args, **kwargs))}
        except Hung as error:
            return {"hung": self.describe(error)}
        except BaseException as error:  # noqa: BLE001 - sys.exit() too is an answer
            return {"error": self.describe(error)}

    def serve(self, read, write):
        sys.dont_write_bytecode = True  # the folder may be read-only; leave nothing behind
        sys.path.insert(0, self.folder)
        try:
            self.module = self.limited(importlib.import_module, self.name)
            hello = {"ok": self.encode(self.module)}
        except Hung as error:
            hello = {"hung": self.describe(error)}
        except BaseException as error:  # noqa: BLE001 - reported as data, with file and line
            hello = {"error": self.describe(error)}
        write(hello)
        if "ok" not in hello:
            return
        while True:
            request = read()
            if request is None:
                return
            write(self.answer(request))


def cut(text, limit=MAX_MESSAGE):
    """A message the judge keeps whole: its start, and how much more there was (the judge cuts too)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters cut by the grader]"


def call(function, *args, **kwargs):
    return function(*args, **kwargs)


FUNCTIONS = {"call": call, "getattr": getattr, "setattr": setattr, "delattr": delattr,
             "repr": repr, "str": str, "format": format, "len": len, "bool": bool, "float": float,
             "int": int, "index": operator.index, "iter": iter, "next": next, "hash": hash,
             "isinstance": isinstance, "issubclass": issubclass, "dir": dir, "round": round}
for _name in ("add sub mul truediv floordiv mod pow matmul lshift rshift and_ or_ xor "
              "eq ne lt le gt ge neg pos abs invert contains getitem setitem delitem iadd isub imul "
              "itruediv ifloordiv imod ipow imatmul ilshift irshift iand ior ixor").split():
    FUNCTIONS[_name] = getattr(operator, _name)


def pipes():
    """Private copies of fds 0 and 1 for the protocol; the learner's prints go to stderr."""
    rfd, wfd = os.dup(0), os.dup(1)
    empty, writer = os.pipe()  # fd 0 reads end of file at once (a jail may have no /dev/null)
    os.close(writer)
    os.dup2(empty, 0)
    os.dup2(2, 1)
    os.close(empty)
    reader = os.fdopen(rfd, "rb")

    def read():
        head = reader.read(4)
        if len(head) < 4:
            return None
        size = int.from_bytes(head, "big")
        if size > MAX_FRAME:
            raise SystemExit(f"a request of {size} bytes")
        return json.loads(reader.read(size))

    def write(message):
        try:
            data = json.dumps(message).encode()
        except (TypeError, ValueError, RecursionError):  # cannot happen for encoded values; be safe
            data = json.dumps({"error": {"type": "ValueError", "builtin": "ValueError", "args": [],
                                         "message": "the sandbox could not encode its answer", "frames": []}}).encode()
        data = len(data).to_bytes(4, "big") + data
        while data:
            data = data[os.write(wfd, data):]

    return read, write


def main(argv):
    folder, name = argv[1], argv[2]
    limit = float(argv[3]) if len(argv) > 3 else None
    read, write = pipes()
    Server(folder, name, limit).serve(read, write)
    os._exit(0)  # no atexit handler of the learner's runs after the last answer


if __name__ == "__main__":
    main(sys.argv)
