"""The message catalogue (autograd_kata/core/i18n.py, autograd_kata/locales/*.po).

Complete in every language, English when a translation is missing, one language
setting (--lang, KATA_LANG, the locale) for kata and the stage tests alike, a
terminal that cannot show Japanese gets English and one notice, and no English
prose in the Japanese text the learner sees (nor Japanese in the English).
"""
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from japanese import JAPANESE, english_words

from autograd_kata.core import i18n
from autograd_kata.core.manifest import STAGES
from autograd_kata.learner.commands import parse_hints
from autograd_kata.pictures import explore
from kit import run_kata

ROOT = Path(__file__).resolve().parent.parent
LANG_VARS = ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE")

@pytest.fixture(autouse=True)
def clean_language(monkeypatch):
    for var in LANG_VARS:
        monkeypatch.delenv(var, raising=False)
    i18n.reset()
    yield
    i18n.reset()


def write_catalogues(folder: Path, **catalogues: str) -> i18n.Messages:
    header = 'msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural=(n != 1);\\n"\n\n'
    for lang, body in catalogues.items():
        (folder / lang).mkdir(exist_ok=True)
        (folder / lang / "all.po").write_text(header + body, encoding="utf-8")
    return i18n.Messages(folder)


def sample(msgid: str, lang: str) -> str:
    """A message with every field filled by a number, as the learner would see it."""
    raw = i18n.raw(msgid, lang, n=2)
    return raw.format(**{name: "0" for name in i18n.fields(raw)})


def terminal_ids() -> list[str]:
    return [msgid for msgid in i18n.MESSAGES.catalogue("en").messages if not msgid.startswith("explore.")]


# --- the catalogue ------------------------------------------------------------

@pytest.mark.parametrize("lang", i18n.languages())
def test_every_id_is_translated_in_every_language_with_the_same_fields(lang):
    assert i18n.check_catalogue(lang) == []


def test_the_completeness_check_fails_when_an_id_lacks_a_language(tmp_path):
    messages = write_catalogues(
        tmp_path,
        en='msgid "a.one"\nmsgstr "One {n}"\n\nmsgid "a.two"\nmsgstr "Two"\n\nmsgid "a.three"\nmsgstr "Three"\n',
        xx='msgid "a.one"\nmsgstr "Un {m}"\n\n#, fuzzy\nmsgid "a.two"\nmsgstr "Deux?"\n\n'
           'msgid "a.old"\nmsgstr "Vieux"\n')
    problems = i18n.check_catalogue("xx", messages)
    assert "xx: no translation of 'a.three'" in problems
    assert "xx: no translation of 'a.two'" in problems, "a fuzzy translation is not a translation"
    assert any("'a.old' is not an English id" in p for p in problems)
    assert any("'a.one' has fields English lacks: ['m']" in p for p in problems)
    assert any("'a.one' drops the fields ['n']" in p for p in problems)


def test_a_missing_translation_falls_back_to_english_never_to_the_id(tmp_path):
    messages = write_catalogues(
        tmp_path,
        en='msgid "a.here"\nmsgstr "Here {n}"\n\nmsgid "a.gone"\nmsgstr "Gone {n}"\n\n'
           'msgid "a.empty"\nmsgstr "Empty"\n\nmsgid "a.fuzzy"\nmsgstr "Fuzzy"\n',
        xx='msgid "a.here"\nmsgstr "Ici {n}"\n\nmsgid "a.empty"\nmsgstr ""\n\n'
           '#, fuzzy\nmsgid "a.fuzzy"\nmsgstr "Flou"\n')
    assert messages.text("a.here", "xx", n=1) == "Ici 1"
    assert messages.text("a.gone", "xx", n=1) == "Gone 1"
    assert messages.text("a.empty", "xx") == "Empty"
    assert messages.text("a.fuzzy", "xx") == "Fuzzy"
    assert messages.text("a.here", "zz", n=2) == "Here 2", "a language without a catalogue reads English"


def test_an_unknown_id_is_a_loud_error():
    with pytest.raises(i18n.UnknownMessage, match="no.such.message"):
        i18n.t("no.such.message")


def test_a_po_file_it_cannot_read_is_an_error_with_its_line(tmp_path):
    with pytest.raises(ValueError, match="xx.po:2"):
        i18n.parse_po('msgid "a"\nmsgstr unquoted\n', "xx.po")
    with pytest.raises(ValueError, match="appears twice"):
        i18n.parse_po('msgid "a"\nmsgstr "A"\n\nmsgid "a"\nmsgstr "B"\n')


def test_the_po_reader_joins_continued_lines_and_reads_escapes():
    headers, messages = i18n.parse_po(
        '# a comment\nmsgid ""\nmsgstr ""\n"Language: xx\\n"\n\n'
        'msgid "a.long"\nmsgstr ""\n"first \\"quoted\\" "\n"second\\n"\n')
    assert headers == {"Language": "xx"}
    assert messages == {"a.long": 'first "quoted" second\n'}


@pytest.mark.skipif(not shutil.which("msgfmt"), reason="GNU gettext's msgfmt is not installed")
@pytest.mark.parametrize("lang", i18n.languages())
def test_the_standard_tools_read_the_catalogues_as_we_do(lang, tmp_path):
    """GNU msgfmt accepts each .po file, and stdlib gettext, reading what it compiled
    (one file after another, as one catalogue), gives the same text for every id and
    count as our reader."""
    import gettext
    standard: gettext.NullTranslations | None = None
    for path in i18n.catalogue_files(lang):
        mo = tmp_path / f"{lang}-{path.stem}.mo"
        done = subprocess.run(["msgfmt", "--check", "-o", str(mo), str(path)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "warning" not in done.stderr, (path, done.stderr)
        with mo.open("rb") as f:
            one = gettext.GNUTranslations(f)
        if standard is None:
            standard = one
        else:
            standard.add_fallback(one)
    assert standard is not None, f"no catalogue files for {lang}"
    ours = i18n.MESSAGES.catalogue(lang).messages
    assert ours
    for msgid, text in ours.items():
        if isinstance(text, tuple):
            for n in (0, 1, 2, 5):
                assert standard.ngettext(msgid, msgid, n) == i18n.raw(msgid, lang, n=n), (msgid, n)
        else:
            assert standard.gettext(msgid) == text, msgid


def test_counts_pick_the_plural_form_of_each_language():
    assert i18n.t_in("en", "hint.all_done", n=1, last=1).startswith("The 1 stage passes")
    assert i18n.t_in("en", "hint.all_done", n=8, last=8).startswith("All 8 stages pass")
    assert i18n.t_in("ja", "hint.all_done", n=1, last=1) .startswith("1ステージ")
    assert i18n.t_in("ja", "hint.all_done", n=8, last=8).startswith("8ステージ")
    with pytest.raises(TypeError, match="n="):
        i18n.t_in("en", "hint.all_done", last=8)


def test_every_id_the_code_asks_for_exists_in_english():
    english = i18n.MESSAGES.catalogue("en").messages
    asked = set()
    for path in (ROOT / "autograd_kata").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        asked |= set(re.findall(r"""\b(?:t|raw|text)\(\s*"([a-z][\w.]*)"|\bt_in\(\s*\w+,\s*"([a-z][\w.]*)"|"""
                                r""""(lesson\.stage\d+|explore\.(?!html"|png")[\w.]+)\"""", text))
    asked = {next(filter(None, groups)) for groups in asked}
    page = (ROOT / "autograd_kata/pictures/explore.html").read_text(encoding="utf-8")
    asked |= set(re.findall(r"\{\{([a-z][\w.]*)\}\}", page)) - {"lang"}
    asked |= {f"hint.level.{n}" for n in (1, 2, 3)} | {f"lang.{code}" for code in i18n.languages()}
    assert {s.lesson_id for s in STAGES} <= asked and "hint.more" in asked, "the scan finds the ids"
    assert sorted(asked - set(english)) == []


# --- which language -------------------------------------------------------------

@pytest.mark.parametrize("flag, env, want", [
    (None, {}, "en"),
    ("ja", {}, "ja"),
    (None, {"KATA_LANG": "ja"}, "ja"),
    (None, {"LANG": "ja_JP.UTF-8"}, "ja"),
    (None, {"LC_MESSAGES": "ja_JP.eucJP", "LANG": "en_US.UTF-8"}, "ja"),
    (None, {"LC_ALL": "C.UTF-8", "LANG": "ja_JP.UTF-8"}, "en"),        # LC_ALL wins over LANG
    (None, {"LANG": "fr_FR.UTF-8"}, "en"),                             # a language without a catalogue
    (None, {"KATA_LANG": "en", "LANG": "ja_JP.UTF-8"}, "en"),          # KATA_LANG wins over the locale
    ("en", {"KATA_LANG": "ja", "LANG": "ja_JP.UTF-8"}, "en"),          # --lang wins over everything
    (None, {"KATA_LANG": "ja-JP"}, "ja"),
])
def test_the_language_is_lang_then_kata_lang_then_the_locale(monkeypatch, flag, env, want):
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert i18n.current_language(flag) == want


def test_a_kata_lang_it_does_not_know_says_so_once_and_uses_the_locale(monkeypatch, capsys):
    monkeypatch.setenv("KATA_LANG", "klingon")
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")
    assert i18n.current_language() == "ja" and i18n.current_language() == "ja"
    err = capsys.readouterr().err
    assert err.count("KATA_LANG=klingon is not one of en, ja") == 1


def test_kata_pins_its_choice_for_the_pytest_runs_it_starts(monkeypatch):
    monkeypatch.setenv("LANG", "ja_JP.UTF-8")
    assert i18n.setup("en", stream=io.StringIO()) == "en"
    assert i18n.child_env({"PATH": "/bin"}) == {"PATH": "/bin", "KATA_LANG": "en"}
    assert i18n.t("hint.level.1") == "why"


def test_plain_pytest_reads_the_same_setting(tmp_path):
    """The stage tests run in their own process: KATA_LANG (or the locale) reaches them."""
    code = "from autograd_kata.core import i18n; print(i18n.current_language(), i18n.t('hint.level.1'))"
    env = {k: v for k, v in os.environ.items() if k not in LANG_VARS}
    for extra, want in (({"KATA_LANG": "ja"}, "ja なぜ"), ({"LANG": "ja_JP.UTF-8"}, "ja なぜ"), ({}, "en why")):
        done = subprocess.run([sys.executable, "-c", code], env={**env, **extra, "PYTHONIOENCODING": "utf-8"},
                              capture_output=True, text=True, encoding="utf-8", timeout=30)
        assert done.stdout.strip() == want, done.stderr


# --- a terminal that cannot show the language -----------------------------------

def test_a_terminal_that_cannot_show_japanese_gets_one_notice_and_english():
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    notice = io.StringIO()
    assert i18n.setup("ja", stream=ascii_out, notice=notice) == "en"
    assert notice.getvalue().count("\n") == 1 and "cannot show Japanese" in notice.getvalue()
    assert i18n.t("hint.level.1") == "why"
    assert i18n.setup("ja", stream=io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) == "ja"


def test_english_terminal_messages_are_ascii_so_the_fallback_shows_them_whole():
    for msgid in terminal_ids():
        text = sample(msgid, "en")
        assert text.isascii(), f"{msgid}: {text!r}"


@pytest.mark.parametrize("encoding", ["cp932", "euc_jp", "utf-8"])
def test_a_japanese_terminal_of_any_common_encoding_shows_japanese(encoding):
    """Windows' cp932 and EUC-JP lack the em dash and superscripts: the terminal
    messages avoid them (the explore page is UTF-8 HTML and may use them)."""
    hints = [(ROOT / s.hint_file("ja")).read_text(encoding="utf-8") for s in STAGES]
    for text in i18n.terminal_texts("ja") + hints:
        text.encode(encoding)  # raises, naming the character, if one cannot be shown
    assert i18n.setup("ja", stream=io.TextIOWrapper(io.BytesIO(), encoding=encoding)) == "ja"


def test_kata_hint_on_an_ascii_terminal_asking_for_japanese(tmp_path):
    for name in ("exercises", "tests"):
        (tmp_path / name).mkdir()
    shutil.copytree(ROOT / "hints", tmp_path / "hints")
    env = {k: v for k, v in os.environ.items() if k not in LANG_VARS}
    env.update(KATA_LANG="ja", PYTHONIOENCODING="ascii", NO_COLOR="1")
    done = subprocess.run([sys.executable, "-m", "autograd_kata", "hint", "3", "--level", "1"], cwd=tmp_path,
                          env=env, capture_output=True, timeout=60)
    out, err = done.stdout.decode("ascii"), done.stderr.decode("ascii")  # raises if anything else came
    assert done.returncode == 0, err
    assert err.count("cannot show Japanese") == 1 and len(err.strip().splitlines()) == 1
    assert "Level 1 - why  (1 of 3)" in out and "More help: kata hint 3 (level 2 of 3)" in out
    assert "reflected" in out, "the English hint file, not a page of question marks"


# --- no English prose in Japanese, no Japanese in English -------------------------

def test_the_prose_detector_finds_english_and_lets_code_through():
    assert english_words("次のヒント: kata hint 3（全3段階のレベル2）") == []
    assert english_words("`self.grad` に out.grad を足す。backward() と Value.tanh() と hints/ja/x.md") == []
    assert english_words("レベル2 — the shape") == ["the", "shape"]


@pytest.mark.parametrize("msgid", terminal_ids() + [m for m in i18n.MESSAGES.catalogue("en").messages
                                                    if m.startswith("explore.")])
def test_each_message_is_japanese_in_japanese_and_english_in_english(msgid):
    ja, en = sample(msgid, "ja"), sample(msgid, "en")
    assert JAPANESE.search(ja) and english_words(ja) == [], f"{msgid} (ja): {ja}"
    assert not JAPANESE.search(en), f"{msgid} (en): {en}"


@pytest.fixture
def kata_copy(tmp_path):
    for name in ("exercises", "tests"):
        (tmp_path / name).mkdir()
    shutil.copytree(ROOT / "hints", tmp_path / "hints")
    return tmp_path


@pytest.mark.parametrize("s", STAGES, ids=lambda s: s.module)
def test_the_hint_frame_is_all_japanese_in_japanese_and_english_in_english(kata_copy, capsys, monkeypatch, s):
    monkeypatch.chdir(kata_copy)
    monkeypatch.setenv("NO_COLOR", "1")
    for lang in ("ja", "en"):
        for level in (1, 2, 3):
            code, out, err = run_kata(capsys, "hint", str(s.number), "--level", str(level), "--lang", lang)
            assert code == 0, err
            _, levels = parse_hints((kata_copy / s.hint_file(lang)).read_text(encoding="utf-8"))
            frame = [line for line in out.splitlines() if line.strip() and line not in levels[level][1].splitlines()]
            assert len(frame) == 3, frame  # title, level heading, footer
            for line in frame:
                if lang == "ja":
                    assert JAPANESE.search(line) and english_words(line) == [], line
                else:
                    assert not JAPANESE.search(line), line


def test_lang_works_before_and_after_the_command_and_wins_over_kata_lang(kata_copy, capsys, monkeypatch):
    monkeypatch.chdir(kata_copy)
    monkeypatch.setenv("KATA_LANG", "en")
    for argv in (["--lang", "ja", "hint", "2", "--level", "1"], ["hint", "2", "--level", "1", "--lang", "ja"]):
        code, out, _ = run_kata(capsys, *argv)
        assert code == 0 and "レベル1：なぜ" in out and "次のヒント: kata hint 2" in out, argv
    code, out, _ = run_kata(capsys, "hint", "2", "--level", "1")
    assert code == 0 and "Level 1 - why" in out, "each run chooses again: KATA_LANG=en"


def fake_results(monkeypatch, passing: int):
    """Stages 1..passing pass, the rest do not (no pytest run)."""
    from types import SimpleNamespace

    from autograd_kata.learner import commands
    monkeypatch.setattr(commands, "results", lambda stages, root, fresh=False, overview=False: {
        s.number: SimpleNamespace(stage=s, ok=s.number <= passing) for s in stages})


def test_kata_hint_without_a_stage_is_the_first_unfinished_one(kata_copy, capsys, monkeypatch):
    monkeypatch.chdir(kata_copy)
    fake_results(monkeypatch, passing=2)
    code, out, _ = run_kata(capsys, "hint", "--lang", "ja")
    assert code == 0 and "ステージ3のヒントです" in out and "ステージ3：定数と左右逆の演算" in out
    assert "次のヒント: kata hint 3（全3段階のレベル2）" in out
    code, out, _ = run_kata(capsys, "hint", "--lang", "en")
    assert "(stage 3 is your first unfinished stage; for another one: kata hint N)" in out
    assert "Level 2 - the shape" in out, "the progress of stage 3 goes on"


def test_kata_hint_without_a_stage_when_every_stage_passes(kata_copy, capsys, monkeypatch):
    monkeypatch.chdir(kata_copy)
    fake_results(monkeypatch, passing=len(STAGES))
    n = len(STAGES)
    code, out, _ = run_kata(capsys, "hint", "--lang", "ja")
    assert code == 0 and out.strip() == (f"{n}ステージすべて合格です。"
                                         f"各ステージのヒントは kata hint N（N = 1..{n}）で読めます")
    code, out, _ = run_kata(capsys, "hint", "--lang", "en")
    assert code == 0 and out.strip() == f"All {n} stages pass. A stage's hints: kata hint N (N = 1..{n})"


def test_the_stage_lessons_follow_the_language(monkeypatch):
    for s in STAGES:
        monkeypatch.setenv("KATA_LANG", "ja")
        ja = s.lesson
        monkeypatch.setenv("KATA_LANG", "en")
        en = s.lesson
        assert JAPANESE.search(ja) and english_words(ja) == [], ja
        assert not JAPANESE.search(en) and en != ja, en


def visible_text(page: str) -> list[str]:
    """Every piece of text a reader (or a screen reader) meets on the explore page."""
    found = re.search(r"/\*KATA_TEXT\*/(.*?)/\*END_KATA_TEXT\*/", page, re.S)
    assert found, "the explore page has no /*KATA_TEXT*/ block"
    script = found.group(1)
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    body = re.sub(r"<!--.*?-->", " ", body, flags=re.S)
    attributes = re.findall(r'(?:aria-label|title|aria-valuetext)="([^"]*)"', body)
    texts = [html.unescape(t).strip() for t in re.split(r"<[^>]+>", body)] + attributes
    script_texts = [re.sub(r"\{\w+\}", "0", text) for text in json.loads(script).values()]  # fields: numbers
    return [t for t in texts if t] + script_texts


def test_the_explore_page_is_written_in_one_language(tmp_path):
    for lang in ("ja", "en"):
        page = explore.page(fn="tanh", x=0.5, lang=lang)
        assert f'<html lang="{lang}">' in page and "{{" not in page
        texts = visible_text(page)
        assert len(texts) > 15
        for text in texts:
            if lang == "ja":
                assert english_words(text) == [], text
            else:
                assert not JAPANESE.search(text), text
        if lang == "ja":
            assert sum(bool(JAPANESE.search(text)) for text in texts) >= 15


def test_kata_explore_writes_the_page_in_the_chosen_language(tmp_path, capsys):
    out = tmp_path / "e.html"
    assert run_kata(capsys, "explore", "--no-open", "--out", str(out), "--lang", "ja")[0] == 0
    assert '<html lang="ja">' in out.read_text(encoding="utf-8")
    assert run_kata(capsys, "--lang", "en", "explore", "--no-open", "--out", str(out))[0] == 0
    assert '<html lang="en">' in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_each_hint_file_is_titled_with_its_stage_title_from_the_catalogue(lang):
    """`kata hint N` shows the file's first line; `kata status` and `kata check` the catalogue's
    title: one stage, one name, in each language."""
    i18n.setup(lang)
    try:
        for s in STAGES:
            first = (ROOT / s.hint_file(lang)).read_text(encoding="utf-8").splitlines()[0]
            title = i18n.t(s.title_id)
            assert first.endswith(f"{s.number}：{title}" if lang == "ja" else f"{s.number} — {title}"), \
                (s.hint_file(lang), first, title)
    finally:
        i18n.reset()


# A hint quotes what kata prints as an excerpt: in double quotes or 「」, with ... (or …)
# where the rest of the line goes.  Code (fenced, or indented 4) is the learner's own text.
QUOTE = re.compile(r'"([^"\n]*?(?:\.\.\.|…)[^"\n]*?)"|「([^」\n]*?(?:\.\.\.|…)[^」\n]*?)」')


def quoted_messages(text: str) -> list[str]:
    prose, fenced = [], False
    for line in text.splitlines():
        fenced ^= line.lstrip().startswith("```")
        if not fenced and not line.startswith("    ") and not line.lstrip().startswith("```"):
            prose.append(line)
    return [a or b for a, b in QUOTE.findall("\n".join(prose))]


def quote_pattern(quote: str) -> re.Pattern:
    """The quote as a pattern over a catalogue text whose {fields} are NUL: ... is anything,
    and any word may stand where a field is (the quote shows one value: `mul`)."""
    parts = []
    for piece in re.split(r"\.\.\.|…", quote):
        parts.append("".join(f"(?:{re.escape(tok)}|\0)" if re.match(r"\w", tok) else re.escape(tok)
                             for tok in re.findall(r"\w+|\W", piece.strip())))
    return re.compile(".*".join(parts), re.S)


def test_the_quote_pattern_finds_a_message_and_refuses_another_language():
    english = ["the \0 rule assigns (=) instead of adding (+=)"]
    assert quote_pattern("the mul rule assigns (=) ...").search(english[0])
    assert not quote_pattern("the mul rule adds (+=) ...").search(english[0])
    assert quote_pattern("... rule assigns (=) ...").search(english[0])
    assert not quote_pattern("`mul` の勾配の配り方が ...").search(english[0])
    assert quoted_messages('a ("the x ...") and\n    "... code ..."\n「次 ...」 and "no ellipsis"') == \
        ["the x ...", "次 ..."]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_message_a_hint_quotes_is_one_kata_prints_in_that_language(lang):
    """hints/ja quote the Japanese message the learner actually sees, hints/en the English."""
    texts = [re.sub(r"\{[^{}]*\}", "\0", text.replace("{{", "{").replace("}}", "}"))
             for text in i18n.terminal_texts(lang)]
    quotes = [(s.hint_file(lang), q) for s in STAGES
              for q in quoted_messages((ROOT / s.hint_file(lang)).read_text(encoding="utf-8"))]
    assert quotes, f"no hint in {lang} quotes a message: the reading of the hints broke"
    wrong = [f"{name}: {quote!r}" for name, quote in quotes
             if not any(quote_pattern(quote).search(text) for text in texts)]
    assert wrong == [], f"quoted as kata's words, but no {lang} message reads so:\n" + "\n".join(wrong)
