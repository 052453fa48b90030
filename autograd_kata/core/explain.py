"""Say where a learner's code crashed or hung, and what that usually means.

The root ``conftest.py`` calls :func:`crash` for an unexpected exception and
:func:`hang` for a test that ran past its time limit; both return the whole
message a learner reads (``kata check`` and plain pytest alike).

A place is ``exercises/stageNN_x.py:LINE`` and that line's text: the innermost
frame in the learner's module.  In grading, the learner's code runs in a
sandbox process and its exceptions carry ``learner_frames = [(filename,
lineno, line_text), ...]``, used when present.

A sentence names a classic mistake only when the code proves it (the line
``out._backward = _backward()`` is in the file; the frame that recursed is
``__radd__`` and its line reads ``other + self``); otherwise it states what
the error means.
"""
from __future__ import annotations

import re
import traceback
from collections import Counter
from pathlib import Path

HANG_PREFIX = "hung: "
CRASH_PREFIX = "crashed: "
NOT_RUN_PREFIX = "not run: "

REFLECTED = {"__radd__": "+", "__rmul__": "*", "__rsub__": "-", "__rtruediv__": "/", "__rpow__": "**"}


def _norm(path) -> str:
    return str(path).replace("\\", "/")


def frames_in(error: BaseException, module_file: str) -> list[tuple[str, int, str, str]]:
    """``(short path, line, function, text)`` of every frame in ``module_file``
    (e.g. ``exercises/stage05_backward.py``), outermost first."""
    given = getattr(error, "learner_frames", None)
    if given:  # from the grading sandbox: every frame is in the submitted file
        found = []
        for entry in given:
            filename, lineno, text = (list(entry) + ["", 0, ""])[:3]
            name = entry[3] if len(entry) > 3 else ""
            path = module_file if _norm(filename).endswith(module_file.rsplit("/", 1)[-1]) else _norm(filename)
            found.append((path, int(lineno or 0), name, (text or "").strip()))
        return found
    return [(module_file, f.lineno or 0, f.name, (f.line or "").strip())
            for f in traceback.extract_tb(error.__traceback__)
            if _norm(f.filename).endswith(module_file)]


def _source(root: Path, module_file: str) -> list[str]:
    try:
        return (Path(root) / module_file).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []


def _where(frame) -> str:
    path, line, name, text = frame
    where = f"{path}:{line}, in {name}" if name else f"{path}:{line}"
    return f"{where}: {text}" if text else where


def advice(error: BaseException, frames, source: list[str], module_file: str) -> str:
    """One sentence for the common crashes; '' when there is nothing sure to say."""
    text = str(error)
    kind = type(error).__name__
    if kind == "TypeError" and "'NoneType' object is not callable" in text:
        called = [n + 1 for n, line in enumerate(source)
                  if re.search(r"\._backward\s*=\s*_backward\s*\(\s*\)", line)]
        if called:
            lines = ", ".join(map(str, called))
            return (f"{module_file} line{'s' * (len(called) > 1)} {lines}: `out._backward = _backward()` "
                    f"calls the rule once, now, and stores what it returns (None). Store the rule itself, "
                    f"to be called later by backward(): `out._backward = _backward` (no parentheses).")
        return "something called here is None: a function was expected (is a `_backward` set to None?)."
    if kind == "RecursionError":
        if not frames:
            return ("a function called itself again and again, deeper than Python allows "
                    "(about 1000 frames).")
        (path, line, name, code), _ = Counter(frames).most_common(1)[0]
        if not name:  # a sandbox frame carries no function name: read it off the line
            symbol = re.search(r"other\s*(\*\*|[-+*/])\s*self", code)
            name = next((n for n, o in REFLECTED.items() if symbol and o == symbol.group(1)), "a function")
        op = REFLECTED.get(name)
        if op and re.search(rf"other\s*{re.escape(op)}\s*self", code):
            return (f"`{name}` (line {line}) computes `{code.removeprefix('return ').strip()}`: with a plain "
                    f"number on the left Python asks `{name}` again, for ever. Put self on the left "
                    f"(`{name}` of `2 {op} v` is `v {op} 2` for + and *; for - and / build it from "
                    f"operations on self, e.g. `(-self) + other`).")
        return (f"`{name}` (line {line}) calls itself again and again, deeper than Python allows "
                f"(about 1000 frames): a recursion without end, or a recursive walk of a graph that is "
                f"too deep for it. A loop with an explicit stack has no depth limit.")
    if kind == "TypeError" and re.search(r"object of type 'Value' has no len\(\)|'Value' object is not "
                                         r"(iterable|subscriptable)", text):
        return ("a single Value came where a list of Values was expected. In this kata a Layer always "
                "returns a list, even of one Value; only MLP.__call__ unwraps a last layer of one "
                "(`x[0] if len(x) == 1 else x`).")
    if kind == "AttributeError" and text.startswith("'NoneType' object has no attribute"):
        return ("a value that should be a Value is None: does every operation end with `return out`?")
    if kind == "AttributeError" and re.match(r"'(int|float)' object has no attribute", text):
        return ("a plain number reached code that expects a Value: wrap it first "
                "(`other if isinstance(other, Value) else Value(other)`).")
    if kind == "AttributeError" and text.startswith("'Value' object has no attribute"):
        missing = text.rsplit(" ", 1)[-1].strip("'")
        return (f"a Value without `{missing}`: __init__ (stage 1) sets data, grad, _backward, _prev "
                f"and _op; check the spelling too.")
    if kind == "TypeError" and re.search(r"unsupported operand type\(s\) for .*'(int|float)' and 'Value'", text):
        return ("with a plain number on the left, Python asks the Value's reflected method "
                "(`__radd__`, `__rmul__`, `__rsub__`, `__rtruediv__`): is it written?")
    if kind in ("NameError", "UnboundLocalError"):
        return "a name used before it is defined or assigned: a typo, or a missing `self.`?"
    return ""


def crash(error: BaseException, module_file: str, root: Path, stage: int, test_place: str = "") -> str:
    """The message for an unexpected exception while testing ``module_file``."""
    frames = frames_in(error, module_file)
    head = f"{CRASH_PREFIX}{type(error).__name__}: {error}".rstrip()
    if len(head) > 300:
        head = head[:300] + "..."
    lines = [head]
    if frames:
        lines.append(f"  at {_where(frames[-1])}")
    elif test_place:
        lines.append(f"  in the test, at {test_place} (your code returned or stored something it could not use)")
    said = advice(error, frames, _source(root, module_file), module_file)
    if said:
        lines.append(f"  {said}")
    lines.append(f"  -> kata hint {stage}")
    return "\n".join(lines)


def hang(error: BaseException, module_file: str, limit: float, stage: int) -> str:
    """The message for a test that ran past its time limit."""
    frames = frames_in(error, module_file)
    where = (f"your code was at {_where(frames[-1])}" if frames
             else f"no line of {module_file} was running at that moment")
    return (f"{HANG_PREFIX}the test ran past its {limit:g} s time limit; {where}\n"
            f"  An infinite loop? (a loop whose condition never changes, a node pushed back onto the stack "
            f"it came from, ...)\n"
            f"  The other tests of stage {stage} were not run. -> kata hint {stage}")
