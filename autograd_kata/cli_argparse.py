"""argparse in the learner's language: its own words ("usage: ", "options", its errors) from the
catalogue, and help wrapped by terminal columns (Japanese has no spaces; a kanji takes two).

Split from ``cli.py`` (the command table and ``main``), which uses ``argparse_in_language``
around building and running a parser, and the two help formatters below.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

from autograd_kata.core import i18n
from autograd_kata.core.term import width, wrap

# argparse's own words ("usage: ", "options", its errors), as argparse asks for
# them: through ``argparse._`` and ``argparse.ngettext`` (gettext's, bound at its
# import, in every Python from 3.10 to 3.14).  Each English text maps to a catalogue
# id and the %-placeholders that id's {fields} stand for, so the translation keeps
# argparse's own formatting.  Texts not listed (the programmer's errors) stay English.
ARGPARSE_WORDS: dict[str, tuple[str, dict[str, str]]] = {
    "usage: ": ("argparse.usage", {}),
    "positional arguments": ("argparse.positionals", {}),
    "options": ("argparse.options", {}),
    "show this help message and exit": ("argparse.help", {}),
    "show program's version number and exit": ("argparse.version", {}),     # 3.13+ asks
    "%(prog)s: error: %(message)s\n": ("argparse.error", {"prog": "%(prog)s", "message": "%(message)s"}),
    "%(prog)s: warning: %(message)s\n": ("argparse.warning", {"prog": "%(prog)s", "message": "%(message)s"}),
    "argument %(argument_name)s: %(message)s": (
        "argparse.argument", {"argument_name": "%(argument_name)s", "message": "%(message)s"}),
    "unrecognized arguments: %s": ("argparse.unrecognized", {"args": "%s"}),
    "the following arguments are required: %s": ("argparse.required", {"args": "%s"}),
    "one of the arguments %s is required": ("argparse.one_required", {"args": "%s"}),
    "not allowed with argument %s": ("argparse.not_allowed", {"arg": "%s"}),
    "ignored explicit argument %r": ("argparse.ignored", {"arg": "%r"}),
    "ambiguous option: %(option)s could match %(matches)s": (
        "argparse.ambiguous", {"option": "%(option)s", "matches": "%(matches)s"}),
    "unexpected option string: %s": ("argparse.unexpected", {"option": "%s"}),
    "expected one argument": ("argparse.expected_one", {}),
    "expected at most one argument": ("argparse.expected_at_most_one", {}),
    "expected at least one argument": ("argparse.expected_at_least_one", {}),
    "invalid %(type)s value: %(value)r": ("argparse.invalid_value", {"type": "%(type)s", "value": "%(value)r"}),
    "invalid choice: %(value)r (choose from %(choices)s)": (
        "argparse.invalid_choice", {"value": "%(value)r", "choices": "%(choices)s"}),
    "invalid choice: %(value)r, maybe you meant %(closest)r? (choose from %(choices)s)": (   # 3.14
        "argparse.invalid_choice_closest", {"value": "%(value)r", "closest": "%(closest)r", "choices": "%(choices)s"}),
    "unknown parser %(parser_name)r (choices: %(choices)s)": (
        "argparse.unknown_parser", {"parser_name": "%(parser_name)r", "choices": "%(choices)s"}),
    "can't open '%(filename)s': %(error)s": (
        "argparse.cannot_open", {"filename": "%(filename)s", "error": "%(error)s"}),
}
# ngettext's texts: the singular's English names the entry (its {count} is argparse's %s)
ARGPARSE_COUNTED: dict[str, tuple[str, dict[str, str]]] = {
    "expected %s argument": ("argparse.expected_n", {"count": "%s"}),
}


def argparse_word(text: str) -> str:
    """argparse's ``text`` in the current language (as ``gettext.gettext`` would give it)."""
    if text not in ARGPARSE_WORDS:
        return text
    msgid, placeholders = ARGPARSE_WORDS[text]
    end = "\n" if text.endswith("\n") else ""  # a catalogue text ends in no newline (msgfmt --check)
    return i18n.t(msgid, **placeholders) + end


def argparse_counted(singular: str, plural: str, n: int) -> str:
    """argparse's counted ``singular``/``plural`` for ``n`` (as ``gettext.ngettext``)."""
    if singular not in ARGPARSE_COUNTED:
        return singular if n == 1 else plural
    msgid, placeholders = ARGPARSE_COUNTED[singular]
    return i18n.raw(msgid, n=n).format(**placeholders)


@contextlib.contextmanager
def argparse_in_language():
    """argparse asks the catalogue for its words while the parser is built and used:
    through the names it imported from gettext, or gettext's own where it has none (an
    argparse that imports gettext only when it needs a word)."""
    import gettext
    owner = argparse if hasattr(argparse, "_") else gettext
    names = ("_", "ngettext") if owner is argparse else ("gettext", "ngettext")
    saved = [getattr(owner, name) for name in names]
    for name, bridge in zip(names, (argparse_word, argparse_counted), strict=True):
        setattr(owner, name, bridge)
    said = argparse.ArgumentError.__str__
    if "_" not in said.__code__.co_names:  # 3.10's: "argument %(argument_name)s: ..." without gettext
        argparse.ArgumentError.__str__ = _argument_error  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name, value in zip(names, saved, strict=True):
            setattr(owner, name, value)
        argparse.ArgumentError.__str__ = said  # type: ignore[method-assign]


def _argument_error(error) -> str:
    """``str()`` of an ``argparse.ArgumentError`` as Python 3.11 and later say it: through gettext."""
    if error.argument_name is None:
        return error.message
    return argparse_word("argument %(argument_name)s: %(message)s") % {
        "message": error.message, "argument_name": error.argument_name}


class HelpFormatter(argparse.HelpFormatter):
    """argparse's layout, with Japanese wrapped by terminal columns (a kanji takes two)
    between any two characters, as it has no spaces; text without wide characters is
    wrapped by argparse itself, so English reads as before."""

    def _split_lines(self, text, width_):
        if width(text) == len(text):
            return super()._split_lines(text, width_)
        return wrap(text, width_)

    def _fill_text(self, text, width_, indent):
        if width(text) == len(text):
            return super()._fill_text(text, width_, indent)
        return "\n".join(indent + line for line in wrap(text, width_ - len(indent)))


class RawDescriptionHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """The description's own line breaks kept; the arguments' help wrapped as above."""


def command_in(argv) -> str | None:
    """The command's name: the first word that is not an option (nor --lang's value)."""
    after_lang = False
    for word in argv:
        if not after_lang and not word.startswith("-"):
            return word
        after_lang = word == "--lang"
    return None


def invoked_as() -> str:
    """The name the learner typed: ``autograd-kata`` (the script under the distribution's
    name, where another package's ``kata`` is installed) or ``kata`` (also for ``python -m``)."""
    name = Path(sys.argv[0]).name.removesuffix(".exe")
    return name if name == "autograd-kata" else "kata"
