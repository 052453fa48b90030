"""Every learner-facing word, from one message catalogue per language.

The catalogues are gettext ``.po`` files in ``autograd_kata/locales/<lang>/`` (the
format translators and their tools know): one file per stage (``stageNN.po``: its
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

Why a small parser and not ``gettext``: stdlib ``gettext`` reads only compiled
``.mo`` files, so every install (editable ones too) would need a build step
and the ``.po`` source and the ``.mo`` could drift.  The subset of ``.po`` we
use (comments, flags, ``msgid``/``msgstr``, ``msgid_plural``/``msgstr[N]``,
continued strings, the ``Plural-Forms`` header) takes forty lines to read, and
the ``.po`` file stays the single source.

Counts: an entry with ``msgid_plural`` has one form per the language's
``Plural-Forms`` (English two, Japanese one); ``t(id, n=3)`` picks the form.

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
from pathlib import Path

DEFAULT = "en"
ENV = "KATA_LANG"
LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locales"


class UnknownMessage(KeyError):
    """An id that the English catalogue does not have: a bug in the caller."""


# --- reading a .po file -------------------------------------------------------

_KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")\s*$')


def _unquote(token: str, where: str) -> str:
    import ast
    try:
        value = ast.literal_eval(token)  # a C string and a Python str literal agree on "..." and \n \t \" \\
    except (SyntaxError, ValueError):
        value = None
    if not isinstance(value, str):
        raise ValueError(f"{where}: not a quoted string: {token}")
    return value


def parse_po(text: str, name: str = "<po>") -> tuple[dict[str, str], dict[str, str | tuple[str, ...]]]:
    """``(headers, messages)`` of a ``.po`` file.  A message is a string, or a
    tuple of plural forms.  Fuzzy and empty translations are left out, so that
    they fall back to English; obsolete (``#~``) entries are ignored."""
    messages: dict[str, str | tuple[str, ...]] = {}
    headers: dict[str, str] = {}
    entries: list[tuple[dict[str, str], bool]] = []
    entry: dict[str, str] = {}
    key: str | None = None
    fuzzy = False

    def finish():
        nonlocal entry, key, fuzzy
        if "msgid" in entry:
            entries.append((entry, fuzzy))
        entry, key, fuzzy = {}, None, False

    for number, line in enumerate(text.splitlines(), 1):
        where = f"{name}:{number}"
        line = line.strip()
        if not line:
            finish()
        elif line.startswith("#"):
            if key is not None and not line.startswith("#~"):
                finish()  # a comment after a message starts the next one
            if line.startswith("#,") and "fuzzy" in [flag.strip() for flag in line[2:].split(",")]:
                fuzzy = True
        elif line.startswith('"'):
            if key is None:
                raise ValueError(f"{where}: a continued string with nothing to continue")
            entry[key] += _unquote(line, where)
        else:
            match = _KEYWORD.match(line)
            if not match:
                raise ValueError(f"{where}: cannot read this line: {line}")
            word, _, token = match.groups()
            if word in ("msgctxt", "msgid") and key is not None and key.startswith("msgstr"):
                finish()
            key = word
            if key in entry:
                raise ValueError(f"{where}: {key} twice in one entry")
            entry[key] = _unquote(token, where)
    finish()

    seen = set()
    for entry, fuzzy in entries:
        msgid = entry["msgid"]
        if msgid in seen:
            raise ValueError(f"{name}: the id {msgid!r} appears twice")
        seen.add(msgid)
        if msgid == "":
            for header in entry.get("msgstr", "").splitlines():
                field, _, value = header.partition(":")
                if field.strip():
                    headers[field.strip()] = value.strip()
            continue
        if fuzzy:
            continue
        if "msgid_plural" in entry:
            forms: list[str] = []
            while f"msgstr[{len(forms)}]" in entry:
                forms.append(entry[f"msgstr[{len(forms)}]"])
            if forms and all(forms):
                messages[msgid] = tuple(forms)
        elif entry.get("msgstr"):
            messages[msgid] = entry["msgstr"]
    return headers, messages


# --- catalogues ---------------------------------------------------------------

class Catalogue:
    """One language's messages and its plural rule."""

    def __init__(self, lang: str, headers: dict[str, str], messages: dict):
        self.lang = lang
        self.headers = headers
        self.messages = messages
        forms = headers.get("Plural-Forms", "")
        count = re.search(r"nplurals\s*=\s*(\d+)", forms)
        rule = re.search(r"plural\s*=\s*([^;]+)", forms)
        self.nplurals = int(count.group(1)) if count else 2
        # gettext.c2py turns the header's C expression into a function, refusing anything else
        import gettext
        self.plural = gettext.c2py(rule.group(1).strip()) if rule else (lambda n: int(n != 1))


def catalogue_files(lang: str, folder: Path = LOCALE_DIR) -> list[Path]:
    """The files of ``lang``'s catalogue: ``folder/lang/*.po``, one per stage
    (``stageNN.po``) and one per part of the tool (``cli.po``, ``grading.po`` ...)."""
    return sorted((Path(folder) / lang).glob("*.po"))


class Messages:
    """The catalogues in one folder (the package's own, or a test's): a language is
    a folder of ``.po`` files, read as one catalogue (an id in two files is an error)."""

    def __init__(self, folder: Path = LOCALE_DIR):
        self.folder = Path(folder)
        self._cache: dict[str, Catalogue] = {}
        self._languages: tuple[str, ...] | None = None

    def languages(self) -> tuple[str, ...]:
        """Every language with a catalogue, English first (looked up once)."""
        if self._languages is None:
            found = sorted(p.name for p in self.folder.iterdir() if p.is_dir() and any(p.glob("*.po")))
            self._languages = tuple(sorted(found, key=lambda lang: lang != DEFAULT))
        return self._languages

    def catalogue(self, lang: str) -> Catalogue:
        if lang not in self._cache:
            paths = catalogue_files(lang, self.folder)
            if not paths:
                raise LookupError(f"no message catalogue for {lang!r} (no {self.folder / lang}/*.po)")
            headers: dict[str, str] = {}
            messages: dict[str, str | tuple[str, ...]] = {}
            for path in paths:
                its_headers, its_messages = parse_po(path.read_text(encoding="utf-8"), f"{lang}/{path.name}")
                twice = sorted(set(its_messages) & set(messages))
                if twice:
                    raise ValueError(f"{lang}/{path.name}: {twice[0]!r} is in another file of {lang}/ too")
                headers = headers or its_headers
                messages.update(its_messages)
            self._cache[lang] = Catalogue(lang, headers, messages)
        return self._cache[lang]

    def entry(self, msgid: str, lang: str) -> tuple[Catalogue, str | tuple[str, ...]]:
        """The catalogue that has ``msgid`` (``lang``'s, else English's) and its text."""
        for code in dict.fromkeys((lang, DEFAULT)):
            try:
                cat = self.catalogue(code)
            except LookupError:
                continue
            if msgid in cat.messages:
                return cat, cat.messages[msgid]
        raise UnknownMessage(f"no message {msgid!r} in the English catalogue {self.folder / DEFAULT}/")

    def raw(self, msgid: str, lang: str, n: int | None = None) -> str:
        """The unformatted text (the form for ``n``, for a counted message)."""
        cat, text = self.entry(msgid, lang)
        if isinstance(text, tuple):
            if n is None:
                raise TypeError(f"message {msgid!r} depends on a count: pass n=")
            index = int(cat.plural(abs(int(n))))
            return text[min(index, len(text) - 1)]
        return text

    def text(self, msgid: str, lang: str, **fields) -> str:
        return self.raw(msgid, lang, fields.get("n")).format(**fields)


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
