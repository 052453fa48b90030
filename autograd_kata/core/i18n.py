"""Every learner-facing word, from one message catalogue per language.

The catalogues are gettext ``.po`` files in ``autograd_kata/locales/<lang>/`` (the
format translators and their tools know; ``core/catalogues.py`` reads them): one file per stage (``stageNN.po``: its
lesson, title, test messages and mistakes' labels) and one per part of the tool
(``cli.po``, ``learner.po``, ``tests.po``, ``grading.po``, ``pictures.po``,
``site.po``).  Messages are keyed by stable ids rather than by English sentences::

    msgid "hint.more"
    msgstr "More help: kata hint {n} (level {next} of {top})"

English is a catalogue like any other.  ``t("hint.more", n=4, next=2, top=3)``
formats the current language's text with ``str.format``.  A translation that
is missing (or empty, or marked ``#, fuzzy``) falls back to English, never to
the id; an id that English does not know is a bug and raises ``UnknownMessage``.
Adding a language means adding one ``xx/`` folder with the same files.

The language is one setting for ``kata`` and for plain ``pytest`` runs of the
stage tests alike: ``--lang`` (which ``kata`` passes to ``setup``), then
``KATA_LANG``, then the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``: the
first one set wins, as POSIX says), then English.  ``kata`` pins its choice in
``KATA_LANG`` for the pytest processes it starts (``child_env``), so both sides
speak the same language.  A terminal that cannot show the chosen language gets
one notice and English.

Moving a string into the catalogue (the step after the merge, for the test
messages and the CLI): pick an id ``area.what`` (``check.to_go``,
``rule.mul_other_operand``), add it to the right file of ``en/`` (a stage's
message to its ``stageNN.po``) with its English text and ``{fields}`` for
everything computed, add the translation to the same file of ``ja/`` with the
same fields, and call ``t`` with that id and the fields where the f-string was.
``tooltests/test_i18n.py`` then fails until every language has the id, every
``t("...")`` in the package names an id English has, and no Japanese message
keeps English prose.  For the stage tests: ``from autograd_kata.core.i18n
import t`` reads ``KATA_LANG`` / the locale (``current_language()``); a plain
pytest run may call ``setup(stream=sys.stdout)`` once (tests/conftest.py) so a
terminal that cannot show Japanese gets English and one notice.
"""
from __future__ import annotations

import os
import re
import sys

from autograd_kata.core.catalogues import (  # noqa: F401 - the catalogues' names, read as i18n's too
    DEFAULT,
    LOCALE_DIR,
    Catalogue,
    Messages,
    UnknownMessage,
    catalogue_files,
    parse_po,
)

ENV = "KATA_LANG"
LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")


MESSAGES = Messages()


def languages() -> tuple[str, ...]:
    """The languages ``--lang`` and ``KATA_LANG`` accept, English first."""
    return MESSAGES.languages()


# --- which language -----------------------------------------------------------

_chosen: str | None = None     # set by setup() for the rest of this process
_warned: set[str] = set()


def _match(value: str, available) -> str | None:
    """``ja_JP.UTF-8`` -> ``ja``; ``pt-BR`` -> ``pt_BR`` or ``pt``; ``C`` -> None."""
    value = value.strip().split(".")[0].split("@")[0].replace("-", "_")
    lowered = {lang.lower(): lang for lang in available}
    for candidate in (value.lower(), value.lower().split("_")[0]):
        if candidate in lowered:
            return lowered[candidate]
    return None


def current_language(flag: str | None = None) -> str:
    """``flag`` (from ``--lang``), else what ``setup`` chose, else ``KATA_LANG``,
    else the locale (``ja_JP.UTF-8`` means Japanese), else English."""
    available = languages()
    if flag:
        found = _match(flag, available)
        if found is None:
            raise ValueError(f"no language {flag!r}; the languages are {', '.join(available)}")
        return found
    if _chosen:
        return _chosen
    wanted = os.environ.get(ENV, "").strip()
    if wanted:
        found = _match(wanted, available)
        if found:
            return found
        if wanted not in _warned:
            _warned.add(wanted)
            said = MESSAGES.text('i18n.unknown_env', DEFAULT, var=ENV, value=wanted, langs=', '.join(available))
            print(f"kata: {said}", file=sys.stderr)
    for var in LOCALE_VARS:
        value = os.environ.get(var)
        if value:  # POSIX: the first one set wins, even C or a language we lack
            return _match(value, available) or DEFAULT
    return DEFAULT


# Messages written into a page (UTF-8 HTML), never to the terminal.
PAGE_IDS = ("explore.",)


def terminal_texts(lang: str) -> list[str]:
    """Every form of every message of ``lang`` that a terminal may have to show."""
    texts: list[str] = []
    for msgid, text in MESSAGES.catalogue(lang).messages.items():
        if not msgid.startswith(PAGE_IDS):
            texts.extend(text if isinstance(text, tuple) else (text,))
    return texts


def can_show(lang: str, stream=None) -> bool:
    """Whether ``stream`` can print every terminal message of ``lang`` (a
    stream without an encoding, like StringIO, takes any text)."""
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    texts = terminal_texts(lang)
    try:
        "".join(texts).encode(encoding)
    except UnicodeEncodeError:
        return False
    except LookupError:
        return True  # an encoding Python does not know: let the print decide
    return True


def setup(flag: str | None = None, stream=None, notice=None) -> str:
    """Choose this process's language once (``kata`` calls it with ``--lang``).

    When the terminal cannot show the chosen language, print one notice, in
    English, to ``notice`` (stderr) and use English.  Returns the language.
    """
    global _chosen
    _chosen = None
    lang = current_language(flag)
    stream = stream or sys.stdout
    if lang != DEFAULT and not can_show(lang, stream):
        said = MESSAGES.text('i18n.cannot_show', DEFAULT, language=language_name(lang, DEFAULT),
                             encoding=getattr(stream, 'encoding', '?'))
        print(f"kata: {said}", file=notice or sys.stderr)
        lang = DEFAULT
    _chosen = lang
    return lang


def reset() -> None:
    """Forget ``setup``'s choice (tests, and ``kata`` between in-process runs)."""
    global _chosen
    _chosen = None


def child_env(env: dict | None = None) -> dict:
    """``env`` (default: this process's) with ``KATA_LANG`` pinned to the current
    language, for the pytest processes ``kata`` starts."""
    return {**(os.environ if env is None else env), ENV: current_language()}


# --- the messages ---------------------------------------------------------------

class Text(str):
    """A message as the learner reads it, which still knows what it is made of: its
    catalogue id and fields (some of them messages too).  So a reader in another
    process or language gets data, never prose: ``render(lang)`` says it again in
    another language, ``data()`` is its JSON form and ``Text.load`` reads that
    back; ``ids()`` are the catalogue ids it is built from.  It pickles as itself,
    data and all (a ``--class`` worker's report crosses a process pool and is said
    again in the class's language); joined to other text it becomes a plain ``str``."""

    msgid: str
    fields: dict

    def __new__(cls, value: str, msgid: str, fields: dict):
        text = super().__new__(cls, value)
        text.msgid, text.fields = msgid, fields
        return text

    def __reduce__(self):
        return Text, (str(self), self.msgid, self.fields)

    def render(self, lang: str) -> str:
        return t_in(lang, self.msgid, **{k: v.render(lang) if isinstance(v, Text) else v
                                          for k, v in self.fields.items()})

    def ids(self) -> set[str]:
        return {self.msgid}.union(*(v.ids() for v in self.fields.values() if isinstance(v, Text)))

    def data(self) -> dict:
        def plain(v):
            if isinstance(v, Text):
                return v.data()
            return v if isinstance(v, (int, float, bool)) or v is None else str(v)
        return {"id": self.msgid, "args": {k: plain(v) for k, v in self.fields.items()}}

    @classmethod
    def load(cls, data, lang: str) -> str:
        """The text of ``data()``'s form in ``lang``; ValueError if it is not that form
        or names a message the catalogue does not have."""
        if isinstance(data, dict) and data.keys() == {"join"} and isinstance(data["join"], list):
            return "".join(part if isinstance(part, str) else cls.load(part, lang) for part in data["join"])
        if not (isinstance(data, dict) and isinstance(data.get("id"), str) and isinstance(data.get("args"), dict)):
            raise ValueError(f"not a message: {data!r}"[:200])
        args = {k: cls.load(v, lang) if isinstance(v, dict) else v for k, v in data["args"].items()}
        try:
            return t_in(lang, data["id"], **args)
        except (UnknownMessage, KeyError, IndexError, TypeError, ValueError) as error:
            raise ValueError(f"message {data['id']!r} cannot be said: {error}") from None


class Joined(Text):
    """Messages and plain pieces (indentation, a line break, a command, Python's own words)
    put end to end, still data: a composite message (a crash, a hang) said again in any
    language, part by part.  ``data()`` is ``{"join": [part, ...]}``: a piece as it is, a
    message in its own form.  Made by ``joined``."""

    parts: tuple

    def __new__(cls, parts):
        text = str.__new__(cls, "".join(parts))
        text.msgid, text.fields, text.parts = "", {}, tuple(parts)
        return text

    def __reduce__(self):
        return Joined, (self.parts,)

    def render(self, lang: str) -> str:
        return "".join(p.render(lang) if isinstance(p, Text) else p for p in self.parts)

    def ids(self) -> set[str]:
        return set().union(*(p.ids() for p in self.parts if isinstance(p, Text)))

    def data(self) -> dict:
        return {"join": [p.data() if isinstance(p, Text) else str(p) for p in self.parts]}


def joined(parts, sep: str = "") -> str:
    """``sep.join(parts)`` that keeps what it is made of (``Joined``): each part a message
    (``t``'s ``Text``) or a plain piece."""
    parts = [str(p) if not isinstance(p, Text) else p for p in parts]
    spaced = [piece for i, p in enumerate(parts) for piece in ((sep, p) if i and sep else (p,))]
    return Joined(spaced)


def t(msgid: str, **fields) -> str:
    """The message ``msgid`` in the current language, formatted with ``fields``
    (``n=`` picks the plural form of a counted message)."""
    return Text(MESSAGES.text(msgid, current_language(), **fields), msgid, fields)


def t_in(lang: str, msgid: str, **fields) -> str:
    """The message in a given language (with the same fallback to English)."""
    return Text(MESSAGES.text(msgid, lang, **fields), msgid, fields)


def raw(msgid: str, lang: str | None = None, n: int | None = None) -> str:
    """The unformatted text, for callers that escape it before formatting (HTML)."""
    return MESSAGES.raw(msgid, lang or current_language(), n)


def language_name(code: str, lang: str | None = None) -> str:
    """``ja`` -> "Japanese" in English, "日本語" in Japanese; a language that the
    catalogue does not name yet is named by its own catalogue, else its code."""
    lang = lang or current_language()
    try:
        return MESSAGES.text(f"lang.{code}", lang)
    except UnknownMessage:
        try:
            return MESSAGES.catalogue(code).messages.get("lang.self", code)
        except LookupError:
            return code


# --- for tests and maintainers ------------------------------------------------

_FIELD = re.compile(r"\{(\w*)[^{}]*\}")


def fields(text: str) -> set[str]:
    """The ``{name}`` fields of a message (``{{`` and ``}}`` are literal braces)."""
    return set(_FIELD.findall(text.replace("{{", "").replace("}}", "")))


def check_catalogue(lang: str, messages: Messages = MESSAGES) -> list[str]:
    """What is wrong with ``lang``'s catalogue against English: ids it lacks
    (or has only fuzzy or empty), ids English does not have, fields that differ,
    plural forms that do not match its Plural-Forms.  Empty means complete."""
    english, other = messages.catalogue(DEFAULT), messages.catalogue(lang)
    problems = [f"{lang}: no translation of {msgid!r}" for msgid in english.messages
                if msgid not in other.messages]
    problems += [f"{lang}: {msgid!r} is not an English id (stale or misspelt)" for msgid in other.messages
                 if msgid not in english.messages]
    for msgid, text in other.messages.items():
        if msgid not in english.messages:
            continue
        source = english.messages[msgid]
        want = set().union(*map(fields, source if isinstance(source, tuple) else (source,)))
        forms = text if isinstance(text, tuple) else (text,)
        if isinstance(source, tuple) != isinstance(text, tuple):
            problems.append(f"{lang}: {msgid!r} must {'' if isinstance(source, tuple) else 'not '}have plural forms")
        elif isinstance(text, tuple) and len(text) != other.nplurals:
            problems.append(f"{lang}: {msgid!r} has {len(text)} plural forms, Plural-Forms says {other.nplurals}")
        for form in forms:
            if fields(form) - want:
                problems.append(f"{lang}: {msgid!r} has fields English lacks: {sorted(fields(form) - want)}")
            if not isinstance(text, tuple) and want - fields(form):
                problems.append(f"{lang}: {msgid!r} drops the fields {sorted(want - fields(form))}")
    return problems
