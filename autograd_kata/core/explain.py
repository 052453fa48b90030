"""Say where a learner's code crashed or hung, and what that usually means.

The root ``conftest.py`` calls :func:`crash` for an unexpected exception and
:func:`hang` for a test that ran past its time limit; both return the whole
message a learner reads (``kata check`` and plain pytest alike).

A place is ``exercises/stageNN_x.py:LINE`` and that line's text: the innermost
frame in the learner's module (for a hang, the header of the innermost loop around
that frame's line: :func:`hung_frame`, the same line on every Python).  In grading, the learner's code runs in a
sandbox process and its exceptions carry ``learner_frames = [(filename,
lineno, line_text), ...]``, used when present.

A sentence names a classic mistake only when the code proves it (the line
``out._backward = _backward()`` is in the file; the frame that recursed is
``__radd__`` and its line reads ``other + self``); otherwise it states what
the error means.

Every sentence comes from the catalogue in the learner's language.  What
kind of failure it is (a hang, a crash) is not read back from these words:
the conftest names it as data (``core/results/kinds.py``).
"""
from __future__ import annotations

import ast
import linecache
import re
import traceback
from collections import Counter
from pathlib import Path

from autograd_kata.core.i18n import joined, t

# A stub's NotImplementedError, written in English in the learner's file.
STUB = re.compile(r"stage (\d+): write (\S+) \(kata hint \1\)")


def stub_said(error) -> str:
    """A stub's message ("stage 1: write Value.__init__ (kata hint 1)") told in the
    learner's language; any other text as it is."""
    text = str(error)
    said = STUB.fullmatch(text)
    return t("check.unwritten", n=said[1], what=said[2]) if said else text


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
    where = t("crash.where", path=path, line=line, name=name) if name else f"{path}:{line}"
    return t("crash.where_code", where=where, code=text) if text else where  # the learner's line, as code


def advice(error: BaseException, frames, source: list[str], module_file: str) -> str:
    """One sentence for the common crashes; '' when there is nothing sure to say."""
    text = str(error)
    kind = type(error).__name__
    if kind == "TypeError" and "'NoneType' object is not callable" in text:
        called = [n + 1 for n, line in enumerate(source)
                  if re.search(r"\._backward\s*=\s*_backward\s*\(\s*\)", line)]
        if called:
            return t("crash.backward_called", n=len(called), file=module_file, lines=", ".join(map(str, called)))
        nulled = [n + 1 for n, line in enumerate(source) if re.search(r"\._backward\s*=\s*None\b", line)]
        if nulled and frames and re.search(r"\._backward\s*\(\s*\)", frames[-1][3]):
            return t("crash.released_as_none", line=nulled[0])
        return t("crash.none_called")
    if kind == "RecursionError":
        if not frames:
            return t("crash.recursion")
        (path, line, name, code), _ = Counter(frames).most_common(1)[0]
        if not name:  # a sandbox frame carries no function name: read it off the line
            symbol = re.search(r"other\s*(\*\*|[-+*/])\s*self", code)
            name = next((n for n, o in REFLECTED.items() if symbol and o == symbol.group(1)),
                        t("crash.some_function"))
        op = REFLECTED.get(name)
        if op and re.search(rf"other\s*{re.escape(op)}\s*self", code):
            order = "crash.reflected_order_free" if op in "+*" else "crash.reflected_order_matters"
            return t("crash.reflected_loop", name=name, line=line, op=op, code=code.removeprefix("return ").strip(),
                     fix=t(order, name=name, op=op))
        return t("crash.recursion_in", name=name, line=line)
    if kind == "TypeError" and re.search(r"object of type 'Value' has no len\(\)|'Value' object is not "
                                         r"(iterable|subscriptable)", text):
        return t("crash.single_value")
    if kind == "AttributeError" and text.startswith("'NoneType' object has no attribute"):
        return t("crash.none_value")
    if kind == "AttributeError" and re.match(r"'(int|float)' object has no attribute", text):
        return t("crash.plain_number")
    if kind == "AttributeError" and text.startswith("'Value' object has no attribute"):
        missing = text.rsplit(" ", 1)[-1].strip("'")
        return t("crash.missing_attr", missing=missing)
    if kind == "TypeError" and re.search(r"unsupported operand type\(s\) for .*'(int|float)' and 'Value'", text):
        return t("crash.reflected_missing")
    if kind in ("NameError", "UnboundLocalError"):
        return t("crash.name")
    return ""


def _head(error: BaseException, limit: int = 300) -> str:
    """"crashed: TypeError: ...", its first ``limit`` characters and "..." when longer."""
    kind, said = type(error).__name__, str(error).strip()  # Python's own words: shown as they are
    head = joined([t("crash.prefix"), t("crash.head", type=kind, said=said) if said else kind])
    if len(head) <= limit:
        return head
    cut = head[:limit] + "..."
    # as data where the cut falls in Python's words and the line still ends with them (English)
    keep = limit - len(t("crash.prefix") + t("crash.head", type=kind, said=""))
    shorter = joined([t("crash.prefix"), t("crash.head", type=kind, said=said[:max(keep, 0)] + "...")])
    return shorter if shorter == cut else cut


def learner_frame(frames, root: Path, stage: int):
    """Of ``frames`` (outermost first), the innermost in a function the stage leaves to the
    learner (its stub's ``raise NotImplementedError("stage N: write X")``): a refusal raised
    by the stub's own helper (``_spent``) is shown where the learner's code called it.  The
    innermost frame when the stub cannot be read or no frame is the learner's."""
    if not frames:
        return None
    try:
        from autograd_kata.core.manifest import STAGES
        from autograd_kata.core.state import pristine_stub
        stub = pristine_stub(next(s for s in STAGES if s.number == stage), Path(root))
    except Exception:  # noqa: BLE001 - no stub to read (a sandbox, a renamed stage): the innermost frame
        return frames[-1]
    theirs = {what.rsplit(".", 1)[-1] for n, what in STUB.findall(stub) if int(n) == stage}
    return next((f for f in reversed(frames) if f[2] in theirs), frames[-1])


# the stub's refusal of a second backward() (stages 7-8), written in English in the learner's file
RELEASED = "backward() was called through a graph a second time"


def crash(error: BaseException, module_file: str, root: Path, stage: int, test_place: str = "",
          source_root: Path | None = None) -> str:
    """The message for an unexpected exception while testing ``module_file``: data
    (``i18n.joined``) that any language can say again. The advice reads ``module_file`` under
    ``source_root`` (grading: the sandbox's folder, which holds the submitted file), else ``root``."""
    frames = frames_in(error, module_file)
    lines = [_head(error)]
    if RELEASED in str(error):  # the stub's English words, told in the learner's language too
        lines.append(joined(["  ", t("crash.released_gloss")]))
    if frames:
        lines.append(t("crash.at", where=_where(learner_frame(frames, root, stage))))
    elif test_place:
        lines.append(t("crash.in_test", place=test_place))
    said = advice(error, frames, _source(source_root or root, module_file), module_file)
    if said:
        lines.append(joined(["  ", said]))
    lines.append(f"  -> kata hint {stage}")
    return joined(lines, "\n")


def _learner_lines(error: BaseException, module_file: str) -> list[str]:
    """The lines of the learner's module as ``error``'s frames name it (the file's full path, in
    a traceback or the sandbox's ``learner_frames``); [] when it cannot be read."""
    given = getattr(error, "learner_frames", None)
    names = ([str((list(entry) + [""])[0]) for entry in given] if given
             else [f.filename for f in traceback.extract_tb(error.__traceback__)])
    mine = [name for name in names if _norm(name).endswith(module_file.rsplit("/", 1)[-1])]
    return linecache.getlines(mine[-1]) if mine else []


def innermost_loop(lines: list[str], line: int) -> int | None:
    """The header line of the innermost ``while`` or ``for`` of the same function whose body
    holds ``line`` (in ``lines``, a module's source); None outside every loop or unparsable."""
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return None
    found: int | None = None

    def visit(node: ast.AST, loop: int | None) -> None:
        nonlocal found
        for child in ast.iter_child_nodes(node):
            start, end = getattr(child, "lineno", None), getattr(child, "end_lineno", None)
            if start is None or end is None or not start <= line <= end:
                continue
            here: int | None = loop
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                here = None  # a loop around a definition does not run its body
            elif isinstance(child, (ast.While, ast.For, ast.AsyncFor)):
                in_else = bool(child.orelse) and line >= child.orelse[0].lineno
                here = loop if in_else else child.lineno
            found = here
            visit(child, here)

    visit(tree, None)
    return found


def hung_frame(error: BaseException, module_file: str):
    """Where a hang is named: the learner's innermost frame, on the header of the innermost loop
    that holds the line it was stopped at.  Where in a loop's turn a stop lands depends on the
    Python (3.11 at a signal stops ``while True: pass`` on its header, 3.14's sys.monitoring on
    the body's last line, the jump back): the loop's header is the same on every Python, so
    the terminal and the page name the same line.  None when no frame is the learner's."""
    frames = frames_in(error, module_file)
    if not frames:
        return None
    path, line, name, text = frames[-1]
    lines = _learner_lines(error, module_file)
    loop = innermost_loop(lines, line) if lines else None
    return (path, loop, name, lines[loop - 1].strip()) if loop else frames[-1]


def hang(error: BaseException, module_file: str, limit: float, stage: int) -> str:
    """The message for a test that ran past its time limit (data, as ``crash``'s)."""
    frame = hung_frame(error, module_file)
    where = (t("hang.at", where=_where(frame)) if frame
             else t("hang.nowhere", file=module_file))
    return joined([t("hang.prefix"), t("hang.message", limit=f"{limit:g}", where=where, n=stage)])
