"""The message catalogues: reading ``autograd_kata/locales/<lang>/*.po`` into one catalogue per
language (``Messages``), for ``core/i18n.py``, which says the messages (``t``, ``Text``).

Why a small parser and not ``gettext``: stdlib ``gettext`` reads only compiled
``.mo`` files, so every install (editable ones too) would need a build step
and the ``.po`` source and the ``.mo`` could drift.  The subset of ``.po`` we
use (comments, flags, ``msgid``/``msgstr``, ``msgid_plural``/``msgstr[N]``,
continued strings, the ``Plural-Forms`` header) takes forty lines to read, and
the ``.po`` file stays the single source.

Counts: an entry with ``msgid_plural`` has one form per the language's
``Plural-Forms`` (English two, Japanese one); ``t(id, n=3)`` picks the form.
"""
from __future__ import annotations

import re
from pathlib import Path

DEFAULT = "en"
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
