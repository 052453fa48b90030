"""Terminal output policy shared by every command: when to colour, when to move the cursor."""
from __future__ import annotations

import os
import sys


def use_colour(stream=None) -> bool:
    """Colour on a terminal; never with NO_COLOR (https://no-color.org); FORCE_COLOR forces it."""
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or cursor_ok(stream)


def cursor_ok(stream=None) -> bool:
    """Cursor codes (erase a line, clear the screen) only on a terminal that takes
    them: a tty whose TERM is not ``dumb`` (Emacs' shell, some CI consoles) and, on
    Windows, a console that takes escape sequences (``vt_console``)."""
    stream = stream or sys.stdout
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        if not stream.isatty():
            return False
    except (AttributeError, ValueError):
        return False
    return vt_console(stream)


ENABLE_VIRTUAL_TERMINAL_PROCESSING = 0x0004


def vt_console(stream) -> bool:
    """Whether ``stream``'s console interprets escape sequences (colour, clearing the screen):
    off Windows, yes (a tty's terminal does); on Windows, when the console's VT mode is on
    or can be turned on (Windows 10 and later; Windows Terminal has it on).  A console that
    refuses (an old one) gets plain text, never raw ``ESC [`` codes."""
    if sys.platform != "win32":
        return True
    try:
        import ctypes
        import msvcrt
        kernel32 = ctypes.windll.kernel32
        handle = msvcrt.get_osfhandle(stream.fileno())
        mode = ctypes.c_uint32()
        if not kernel32.GetConsoleMode(handle, ctypes.byref(mode)):
            return False  # not a console (a pipe, a file)
        if mode.value & ENABLE_VIRTUAL_TERMINAL_PROCESSING:
            return True
        return bool(kernel32.SetConsoleMode(handle, mode.value | ENABLE_VIRTUAL_TERMINAL_PROCESSING))
    except (AttributeError, OSError, ValueError):
        return False


def tolerant_output() -> None:
    """A character the terminal cannot encode becomes '?' instead of a crash."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]  # a TextIOWrapper; others: AttributeError
        except (AttributeError, ValueError, OSError):
            pass


def say(*parts, file=None):
    """print(), flushed, that survives a reader going away (a closed pipe)."""
    stream = file or sys.stdout
    try:
        print(*parts, file=stream, flush=True)
    except BrokenPipeError:
        # The reader went away (`kata check 3 | head -1`): stop writing, but let the
        # command finish and return its own exit code. Python's recipe: point the
        # descriptor at devnull so the interpreter's last flush cannot fail again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass


def width(text: str) -> int:
    """Columns ``text`` takes on a terminal: a kana or kanji takes two."""
    import unicodedata
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, columns: int, right: bool = False) -> str:
    """``text`` filled with spaces to ``columns`` terminal columns (``width``), on the left if ``right``."""
    fill = " " * max(0, columns - width(text))
    return fill + text if right else text + fill


# no line starts with these (kinsoku): closing brackets, punctuation, small kana and ー
NO_LINE_START = set("、。，．）」』】〕｝〉》・：；？！ー)]}:;,.?!ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ")


def wrap(text: str, columns: int) -> list[str]:
    """``text`` in lines of at most ``columns`` terminal columns, broken at spaces and
    between wide characters (Japanese has no spaces), never inside a word of narrow
    ones, nor before a closing bracket or punctuation mark (which may hang one column past).  A word wider than a line
    stands alone."""
    import re
    # the pieces a line may break after: a wide character, or a run of narrow ones and its spaces
    pieces = re.findall(r"[^\x00-\u10ff](?:\s+)?|[\x00-\u10ff]+?(?=[^\x00-\u10ff]|\s|$)\s*", " ".join(text.split()))
    lines: list[str] = []
    line = ""
    for piece in pieces:
        if line and width(line + piece.rstrip()) > columns and piece.rstrip() not in NO_LINE_START:
            lines.append(line.rstrip())
            line = ""
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    return lines
