"""The kata command's own words in the learner's language (issue 11).

``kata``, ``kata check`` (failing: a stub, a crash, a hang; passing, with the
numbers of the learner's engine), ``reset``, ``diff`` and ``watch`` run in a
throwaway copy with ``KATA_LANG=ja`` and with ``en``.  In Japanese no line may
keep English prose (code, numbers, file names and test ids excepted: the
detector of ``test_i18n.py``); in English no line may hold Japanese.

Only messages this part owns are checked: a wrong value's message comes from
the stage tests (their own catalogue entries and tooltests), so the failing
cases here are stubs, crashes and hangs, whose every word the command or the
root conftest writes.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import pytest
from test_i18n import JAPANESE, english_words
from test_learner import Reader, copy_kata, solve

from autograd_kata import cli, cli_argparse
from autograd_kata.core import i18n, manifest, runner, state
from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.term import NO_LINE_START, width, wrap
from kit import fresh_copy, stage_test_count

pytestmark = pytest.mark.timeout(180)
# An exception as Python names and words it ("TypeError: 'NoneType' object is not callable"),
# quoted as it is, like code: the learner searches for it in those words.
PYTHON_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Interrupt|Exit): .*$")
DISCOVERY = {6}  # its stub runs (every rule assigns) and fails with a wrong value, not "not written yet"
LANG_VARS = ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE", "NO_COLOR", "FORCE_COLOR", "KATA_WATCH_POLL")


def assert_in_language(text: str, lang: str, skip=()):
    """Every line of ``text`` is in ``lang``: no English prose in Japanese, no Japanese in English."""
    lines = [line for line in text.splitlines() if line.strip() and line not in skip]
    assert lines, "the command said nothing"
    for line in lines:
        if lang == "ja":
            line = PYTHON_ERROR.sub("", line)  # Python's own words, as Python printed them
            assert english_words(line) == [], f"English left in the Japanese output: {line!r}\n---\n{text}"
        else:
            assert not JAPANESE.search(line), f"Japanese in the English output: {line!r}\n---\n{text}"


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    root = copy_kata(tmp_path_factory.mktemp("template"))
    (root / ".kata").mkdir()
    return root


@pytest.fixture
def kata(template, tmp_path, monkeypatch):
    root = fresh_copy(template, tmp_path, monkeypatch, unset=LANG_VARS)
    monkeypatch.setenv("NO_COLOR", "1")
    i18n.reset()
    yield root
    i18n.reset()


def kata_in(capsys, lang, *argv):
    """``kata argv --lang LANG`` in this process (plain ``kata`` with ``KATA_LANG=LANG``):
    (exit code, stdout + stderr).  ``--lang`` sets no KATA_LANG, so the stage tests'
    language proves that ``kata`` passed its choice on to the pytest child."""
    i18n.reset()
    before = os.environ.pop("KATA_LANG", None)
    try:
        if argv:
            code = cli.main([*argv, "--lang", lang])
        else:
            os.environ["KATA_LANG"] = lang
            code = cli.main([])
    finally:
        os.environ.pop("KATA_LANG", None)
        if before is not None:
            os.environ["KATA_LANG"] = before
        i18n.reset()
    out, err = capsys.readouterr()
    return code, out + err


def backward_called_at_once(text):
    """The classic stage-2 crash: the rule is called when it is stored, so None is stored."""
    assert "out._backward = _backward\n" in text, "the reference stores its rules as expected"
    return text.replace("out._backward = _backward\n", "out._backward = _backward()\n")


def topological_order_never_ends(text):
    """A stage-5 hang: the walk pushes a node back onto the stack it came from."""
    marker = "def topological_order(self):\n"
    assert marker in text
    return text.replace(marker, marker + "        while True:\n            pass\n", 1)


# --- kata, kata check --------------------------------------------------------------

@pytest.mark.parametrize("lang", ["ja", "en"])
def test_status_and_every_unwritten_stage_in_one_language(kata, capsys, lang):
    code, out = kata_in(capsys, lang)
    assert code == 0, out
    assert_in_language(out, lang)
    assert ("未着手" if lang == "ja" else "not started") in out
    for s in STAGES:
        code, out = kata_in(capsys, lang, "check", str(s.number))
        assert code == 1
        if s.number in DISCOVERY:  # the frame is ours; the wrong value's lines are the stage tests'
            frame = [line for line in out.splitlines() if not line.startswith("    ")]
            assert_in_language("\n".join(frame), lang)
            continue
        assert_in_language(out, lang)
        said = ("まだ書かれていません" if lang == "ja" else "not written yet") + ": "
        assert said in out, out  # the child pytest spoke the same language as kata


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_crash_and_a_hang_are_explained_in_one_language(kata, capsys, lang):
    solve(kata, 1)
    solve(kata, 2, backward_called_at_once)
    code, out = kata_in(capsys, lang, "check", "2")
    assert code == 1 and "_backward()" in out
    assert ("クラッシュ: " if lang == "ja" else "crashed: ") in out, out
    assert_in_language(out, lang)
    for n in (3, 4):
        solve(kata, n)
    solve(kata, 5, topological_order_never_ends)
    code, out = kata_in(capsys, lang, "check", "5")
    assert code == 1
    assert ("ハング: " if lang == "ja" else "hung: ") in out, out
    assert_in_language(out, lang)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_passing_stages_and_their_numbers_in_one_language(kata, capsys, lang):
    for n in range(1, 8):
        solve(kata, n)
    for n in (1, 2, 6, 7):  # 2 adds the article's +=, 6 and 7 numbers from the learner's own engine
        code, out = kata_in(capsys, lang, "check", str(n))
        assert code == 0, out
        assert_in_language(out, lang)
        assert "kata diff" in out and f"kata check {n + 1}" in out
    assert ("よくできました" if lang == "ja" else "Well done!") in out
    assert "w.grad = -35" in out  # stage 7's numbers came back from the child process


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_reset_and_diff_in_one_language(kata, capsys, lang):
    code, out = kata_in(capsys, lang, "diff", "1")  # not passing yet: refused
    assert code == 1 and "--reveal" in out
    assert_in_language(out, lang)
    solve(kata, 1)
    code, out = kata_in(capsys, lang, "diff", "1")
    assert code == 0
    assert_in_language(out, lang)
    code, out = kata_in(capsys, lang, "reset", "1", "--yes")
    assert code == 0 and ".kata/backups/" in out
    assert_in_language(out, lang)
    code, out = kata_in(capsys, lang, "reset", "1", "--yes")
    assert code == 0
    assert_in_language(out, lang)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_frame_of_a_diff_is_in_one_language(kata, capsys, lang):
    solve(kata, 1)
    (kata / stage(1).source("exercises")).write_text(
        (kata / stage(1).source("exercises")).read_text(encoding="utf-8") + "\n# mine\n", encoding="utf-8")
    code, out = kata_in(capsys, lang, "diff", "1", "--reveal")
    assert code == 0
    frame = [line for line in out.splitlines() if line.startswith(("--- ", "+++ "))]
    assert len(frame) == 2
    assert_in_language("\n".join(frame), lang)


@pytest.mark.timeout(60)
@pytest.mark.skipif(sys.platform == "win32", reason="Ctrl-C cannot be sent to a child process this way on Windows")
@pytest.mark.parametrize("lang", ["ja", "en"])
def test_watch_in_one_language(kata, lang):
    env = {k: v for k, v in os.environ.items() if k not in LANG_VARS}
    env.update(KATA_LANG=lang, KATA_WATCH_POLL="1", PYTHONIOENCODING="utf-8", NO_COLOR="1")
    proc = subprocess.Popen([sys.executable, "-m", "autograd_kata.cli", "watch", "1"], cwd=kata, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    try:
        out = Reader(proc)
        waiting = "Ctrl-C"
        first = out.wait_for(waiting)
        solve(kata, 1)
        n = stage_test_count(1)
        out.wait_for(f"{n} 件" if lang == "ja" else f"all {n} tests", after=first)
        out.wait_for(waiting, after=first + 1)
        proc.send_signal(2)
        assert proc.wait(timeout=10) == 0
        out.thread.join(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert ("見張りをやめました" if lang == "ja" else "Stopped watching.") in out.text
    assert_in_language(out.text.replace("\033[2J\033[H", ""), lang)


# --- the plumbing: the pytest child's language and the cache ----------------------------

def test_the_pytest_child_speaks_english_whatever_kata_speaks(monkeypatch):
    """Its results are data: the cache keeps them once, said in the learner's language when read."""
    for var in LANG_VARS:
        monkeypatch.delenv(var, raising=False)
    i18n.reset()
    try:
        for lang in ("ja", "en"):
            i18n.setup(lang)  # as `kata --lang ja`, with no KATA_LANG set
            assert runner.child_env("exercises")["KATA_LANG"] == "en"
    finally:
        i18n.reset()


def test_one_cached_result_is_said_in_each_language(kata, monkeypatch):
    s = stage(1)
    said, runs = {}, []

    def counted(*args, **kwargs):
        runs.append(args)
        return runner.run(*args, **kwargs)

    keys = set()
    for lang in ("ja", "en", "ja"):
        monkeypatch.setenv("KATA_LANG", lang)
        i18n.reset()
        keys.add(state.result_key(s, kata))
        result = state.cached_results([s], kata, run=counted)[s.number]
        said.setdefault(lang, set()).add(result.tests[0].message)
    assert len(runs) == 1, "one run serves both languages: the switch re-runs nothing"
    assert len(keys) == 1
    (ja,), (en,) = said["ja"], said["en"]
    assert JAPANESE.search(ja) and not JAPANESE.search(en)


# --- kata train, kata graph ---------------------------------------------------------------

@pytest.mark.parametrize("lang", ["ja", "en"])
def test_train_and_graph_say_it_in_one_language(kata, capsys, lang):
    pytest.importorskip("matplotlib")
    # stage 8 unwritten: the reference is trained instead, and the learner is told why
    code, out = kata_in(capsys, lang, "train", "--steps", "3", "--no-zero-grad", "--out", str(kata / "t.png"))
    assert code == 0, out
    assert (kata / "t.png").is_file()
    assert "zero_grad()" in out and "->" in out and "solutions/" in out
    assert_in_language(out, lang)
    for n in range(1, 6):
        solve(kata, n)
    code, out = kata_in(capsys, lang, "graph", "--stage", "5", "--out", str(kata / "g.txt"))
    assert code == 0 and (kata / "g.txt").is_file()
    assert_in_language(out, lang)


def test_the_train_picture_is_english_without_a_font_for_the_language(monkeypatch):
    from autograd_kata.pictures import train
    monkeypatch.setenv("KATA_LANG", "ja")
    i18n.reset()
    try:
        monkeypatch.setattr(train, "picture_font", lambda lang: None)
        assert train.words("train.plot.loss") == "loss"
        monkeypatch.setattr(train, "picture_font", lambda lang: "IPAexGothic" if lang == "ja" else None)
        assert train.words("train.plot.loss") == i18n.t_in("ja", "train.plot.loss") != "loss"
    finally:
        i18n.reset()


# --- kata --help: argparse's texts in the learner's language -----------------------------

# an example line of the help: a kata command or the Python to type, code as it is
EXAMPLE = re.compile(r"^\s+(?:kata |from |draw\()")
# argparse's first column: a command name or an option's syntax (`--set NAME=NUMBER`), then 2+ spaces
SYNTAX_COLUMN = re.compile(r"^\s+\S.*?\s{2,}|^\s+-[\w-]+(?: \S+)?$")


def every_command():
    """Every command's name, as the full parser (every audience) lists it."""
    p = cli.parser(audiences=cli.AUDIENCES)
    (sub,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return list(sub.choices)


COMMAND_NAMES = every_command()  # a name too long for the first column stands on its own line


def help_text(capsys, lang, *argv):
    """``kata argv --help`` with ``KATA_LANG=lang``: (the whole help, its prose).  The
    prose is the help minus syntax: the usage after its label (which is checked), the
    line of the commands' metavar, each argument's first column and the example lines.
    argparse's headings and its help of -h and --version are prose: they must be in ``lang``."""
    os.environ["KATA_LANG"] = lang
    i18n.reset()
    try:
        with pytest.raises(SystemExit) as done:
            cli.main([*argv, "--help"])
    finally:
        os.environ.pop("KATA_LANG", None)
        i18n.reset()
    assert done.value.code == 0
    out = capsys.readouterr().out
    usage = i18n.t_in(lang, "argparse.usage")
    assert out.startswith(usage + "kata"), f"the usage is not labelled {usage!r}:\n{out}"
    kept, in_usage = [usage], False
    for line in out.splitlines():
        if line.startswith(usage):
            in_usage = True
        elif not line.strip():
            in_usage = False
        if in_usage or line.strip() in ("COMMAND", *COMMAND_NAMES) or EXAMPLE.match(line):
            continue
        kept.append(SYNTAX_COLUMN.sub("", line))
    return out, "\n".join(kept)


@pytest.fixture
def student_copy(kata):
    """A copy like `kata release` writes: no reference, so `kata --help` lists the learners' commands only."""
    shutil.rmtree(kata / "solutions")
    (kata / ".kata-release.json").write_text("{}", encoding="utf-8")
    return kata


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_learners_help_lists_their_commands_in_their_language(student_copy, capsys, lang):
    out, prose = help_text(capsys, lang)
    assert_in_language(prose, lang)
    for command in ("status", "check", "hint", "diff", "reset", "watch", "graph", "explore", "train"):
        assert re.search(rf"^\s+{command}\s+\S", out, re.M), f"{command} has no help line:\n{out}"
    assert "mutate" not in out and "release" not in out


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("command", [None, *COMMAND_NAMES])
def test_every_help_speaks_the_learners_language(kata, capsys, monkeypatch, lang, command):
    monkeypatch.setenv("COLUMNS", "80")
    out, prose = help_text(capsys, lang, *([command] if command else []))
    assert_in_language(prose, lang)
    # Japanese is wrapped by terminal columns (a kanji takes two), a closing mark hanging past;
    # a raw description keeps its translator's own line breaks, an example line is typed as it is
    raw = command is not None and cli.COMMANDS[command].raw
    heading = f"\n{i18n.t_in(lang, 'argparse.options')}:\n"
    for line in (out[out.index(heading):] if raw and heading in out else out).splitlines():
        assert width(line) <= 80 or width(line) == len(line) or EXAMPLE.match(line) or (
            width(line) <= 82 and line[-1] in NO_LINE_START), f"wider than the terminal: {line!r}"
    for heading in ("argparse.options",) + (("argparse.positionals",) if "  N " in out else ()):
        assert f"\n{i18n.t_in(lang, heading)}:\n" in out, f"no heading {heading}:\n{out}"
    assert i18n.t_in(lang, "argparse.help") in out


def test_japanese_wraps_between_characters_and_english_as_textwrap_does():
    import textwrap
    english = "Build a scalar autograd engine in eight stages. Run `kata` alone to see where you are."
    assert wrap(english, 30) == textwrap.wrap(english, 30)
    lines = wrap("あいうえおかきくけこ、さしすせそ .kata/backups/ たちつてとフォルダ", 10)
    assert lines == ["あいうえお", "かきくけこ、", "さしすせそ", ".kata/backups/", "たちつてと", "フォルダ"], lines
    assert wrap("あいうフォルダ", 8) == ["あいうフォ", "ルダ"]  # a small kana hangs rather than starts a line


@pytest.mark.parametrize("english, entry", cli_argparse.ARGPARSE_WORDS.items())
def test_english_reads_exactly_as_argparse_itself(monkeypatch, english, entry):
    monkeypatch.setenv("KATA_LANG", "en")
    i18n.reset()
    assert cli_argparse.argparse_word(english) == english
    monkeypatch.setenv("KATA_LANG", "ja")
    i18n.reset()
    ja = cli_argparse.argparse_word(english)
    assert ja != english and ja.endswith("\n") == english.endswith("\n")
    assert sorted(re.findall(r"%\(\w+\)[sr]|%[sr]", ja)) == sorted(re.findall(r"%\(\w+\)[sr]|%[sr]", english)), ja
    for singular, (msgid, placeholders) in cli_argparse.ARGPARSE_COUNTED.items():
        assert i18n.MESSAGES.raw(msgid, "en", 1).format(**placeholders) == singular


def test_the_bridge_reaches_an_argparse_that_imports_gettext_lazily(monkeypatch):
    """3.10-3.14 bind gettext's names at import; one that looks them up in gettext is reached too."""
    import gettext
    before = argparse._, gettext.gettext, gettext.ngettext
    with cli_argparse.argparse_in_language():
        assert argparse._ is cli_argparse.argparse_word and argparse.ngettext is cli_argparse.argparse_counted
    monkeypatch.delattr(argparse, "_")
    with cli_argparse.argparse_in_language():
        assert gettext.gettext is cli_argparse.argparse_word and gettext.ngettext is cli_argparse.argparse_counted
    assert (gettext.gettext, gettext.ngettext) == before[1:]
    monkeypatch.undo()
    assert argparse._ is before[0]


def test_the_bridge_says_an_argument_error_of_an_argparse_that_words_it_without_gettext(monkeypatch):
    """Python 3.10's ArgumentError formats "argument %(argument_name)s: %(message)s" itself, never
    asking gettext: the bridge words it through the catalogue there too, and puts it back after."""
    def as_310(self):
        if self.argument_name is None:
            return self.message
        return f"argument {self.argument_name}: {self.message}"

    monkeypatch.setattr(argparse.ArgumentError, "__str__", as_310)
    error = argparse.ArgumentError(argparse.Action(["--level"], "level"), "9?")
    os.environ["KATA_LANG"] = "ja"
    i18n.reset()
    try:
        with cli_argparse.argparse_in_language():
            said = str(error)
    finally:
        os.environ.pop("KATA_LANG", None)
        i18n.reset()
    assert said == i18n.t_in("ja", "argparse.argument", argument_name="--level", message="9?"), said
    assert str(error) == "argument --level: 9?" and argparse.ArgumentError.__str__ is as_310


# argparse's texts that only a programmer's mistake in cli.py can show, and one without words
ARGPARSE_PROGRAMMERS = {"%(heading)s:",
    ".__call__() not defined", "conflicting subparser: %s", "conflicting subparser alias: %s",
    "argument \"-\" with mode %r", "argument '-' with mode %r", "cannot merge actions - two groups are named %r",
    "'required' is an invalid argument for positionals", "dest= is required for options like %r",
    "invalid conflict_resolution value: %r", "mutually exclusive arguments must be optional",
    "cannot have multiple subparser arguments", "%r is not callable", "subcommands", " (default: %(default)s)",
    "invalid option string %(option)r: must start with a character %(prefix_chars)r",
    "conflicting option string: %s", "argument group must have a title", "mutually exclusive groups cannot be nested",
    "option %(option)s is deprecated", "argument %(argument_name)s is deprecated",
    "command %(parser_name)r is deprecated",
    # Python 3.13.0's wording of the same (kata deprecates nothing)
    "option '%(option)s' is deprecated", "argument '%(argument_name)s' is deprecated",
    "command '%(parser_name)s' is deprecated",
}


def test_every_word_this_pythons_argparse_asks_for_is_in_the_catalogue():
    """argparse's own texts, read from its source: each is translated or a programmer's error."""
    import inspect
    source = inspect.getsource(argparse)
    asked = set()
    for call in re.finditer(r"\b(?:_|ngettext)\(((?:\s*(?:'[^']*'|\"[^\"]*\"))+)", source):
        import ast
        asked.add(ast.literal_eval("(" + call.group(1) + ")"))  # adjacent literals join, as in Python
    assert "usage: " in asked and "options" in asked, "the reading of argparse's source broke"
    known = set(cli_argparse.ARGPARSE_WORDS) | set(cli_argparse.ARGPARSE_COUNTED) | ARGPARSE_PROGRAMMERS
    missing = sorted(asked - known)
    assert missing == [], f"argparse asks for texts kata does not translate (cli_argparse.ARGPARSE_WORDS): {missing}"


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("argv", [("check", "--bogus"), ("hint", "--level", "9"), ("train", "--steps", "many"),
                                  ("diff",), ("nonsense",)], ids=["unknown", "choice", "type", "missing", "command"])
def test_argparse_refuses_in_one_language(kata, capsys, lang, argv):
    os.environ["KATA_LANG"] = lang
    i18n.reset()
    try:
        with pytest.raises(SystemExit) as done:
            cli.main(list(argv))
    finally:
        os.environ.pop("KATA_LANG", None)
        i18n.reset()
    assert done.value.code == 2
    err = capsys.readouterr().err
    usage, error = err.strip().splitlines()[0], err.strip().splitlines()[-1]
    assert usage.startswith(i18n.t_in(lang, "argparse.usage"))
    assert error.startswith("kata") and i18n.t_in(lang, "argparse.error", prog="", message="").strip() in error, err
    # what is code in it: the values as typed or offered ('9', 'init'), options, metavars (N), {1,2,3}
    said = re.sub(r"'[^']*'|--[\w-]+|\b[A-Z]+\b|\{[^}]*\}", "", error.split(": ", 1)[1])
    assert_in_language(said, lang)


def test_lang_anywhere_on_the_line_picks_the_help_language(student_copy, capsys):
    with pytest.raises(SystemExit):
        cli.main(["check", "--help", "--lang", "ja"])
    assert JAPANESE.search(capsys.readouterr().out)
    with pytest.raises(SystemExit):
        cli.main(["--lang=en", "check", "--help"])
    assert not JAPANESE.search(capsys.readouterr().out)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_an_unknown_stage_is_refused_in_one_language(kata, capsys, lang):
    code, out = kata_in(capsys, lang, "check", "99")
    assert code == 2
    assert "99" in out and ", ".join(str(s.number) for s in STAGES) in out  # what came, and what would do
    assert_in_language(out, lang)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_maintainers_command_in_a_student_copy_is_refused_in_one_language(student_copy, capsys, lang):
    code, out = kata_in(capsys, lang, "mutate")
    assert code == 2
    assert "kata mutate" in out and "kata --help" in out  # what was typed, and where the learner's commands are
    assert_in_language(out, lang)


@pytest.mark.parametrize("font", [None, "IPAexGothic"], ids=["no-font", "font"])
def test_kata_train_says_so_when_the_picture_falls_back_to_english(kata, capsys, monkeypatch, font):
    pytest.importorskip("matplotlib")
    from autograd_kata.pictures import train
    monkeypatch.setattr(train, "picture_font", lambda lang: font if lang == "ja" else None)
    code, out = kata_in(capsys, "ja", "train", "--steps", "2", "--impl", "solutions", "--out", str(kata / "t.png"))
    assert code == 0, out
    told = "図の文字は英語で描きました" in out
    assert told == (font is None), out
    if told:
        assert "fonts-ipaexfont-gothic" in out and "Noto Sans CJK JP" in out
    assert_in_language(out, "ja")
    code, out = kata_in(capsys, "en", "train", "--steps", "2", "--impl", "solutions", "--out", str(kata / "t.png"))
    assert code == 0 and "picture's words" not in out  # English needs no other font


@pytest.mark.parametrize("lang", ["ja", "en"])
@pytest.mark.parametrize("argv", [
    ("graph", "--expr", "a + q"), ("graph", "--expr", "a.__class__"), ("graph", "--expr", "(a +"),
    ("graph", "--expr", "2 + 3"), ("graph", "--set", "x"), ("graph", "--set", "x=lots"),
    ("graph", "--expr", "a * b", "--impl", "solutions", "--out", "g.jpg"), ("explore", "--x", "nan"),
], ids=["unset-name", "not-allowed", "syntax", "plain-number", "set-shape", "set-number", "bad-suffix", "bad-x"])
def test_a_wrong_picture_request_is_refused_in_one_language(kata, capsys, lang, argv):
    code, out = kata_in(capsys, lang, *argv)
    assert code == 2, out
    assert len(out.strip().splitlines()) == 1 and out.startswith(f"kata {argv[0]}: "), out
    said = out.replace(f"kata {argv[0]}: ", "")
    for word in argv[1:]:  # the learner's own words, echoed back
        said = said.replace(repr(word), "").replace(repr(word.partition("=")[2]), "")
    assert_in_language(said, lang)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_stage_module_that_does_not_import_is_named_in_one_language(kata, capsys, monkeypatch, lang):
    drawn = manifest.role("mlp")  # the stage whose Value kata graph draws by default
    (kata / drawn.source("exercises")).write_text("class Value(:\n", encoding="utf-8")
    for name in [name for name in sys.modules if name.split(".")[0] == "exercises"]:
        monkeypatch.delitem(sys.modules, name)  # another test of this process imported another kata's
    code, out = kata_in(capsys, lang, "graph")
    assert code == 1 and drawn.source("exercises") in out and "SyntaxError" in out, out
    said = out.replace("kata graph: ", "").split("SyntaxError")[0]  # Python's own words after it
    assert_in_language(said, lang)
    code, out = kata_in(capsys, lang, "diff", "3", "--previous")
    assert code == 0 and ("（スタブ）" in out) == (lang == "ja") and ("(stub)" in out) == (lang == "en"), out


# --- every question kata asks, and the graph's text tree ------------------------------------

@pytest.mark.parametrize("lang, answer, resets", [
    ("ja", "n", False), ("ja", "はい", True), ("ja", "y", True), ("en", "", False), ("en", "yes", True)])
def test_kata_reset_asks_in_one_language_and_understands_its_yes(kata, capsys, monkeypatch, lang, answer, resets):
    solve(kata, 1)
    path = kata / stage(1).source("exercises")
    solved = path.read_text(encoding="utf-8")
    asked = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)  # a learner at a terminal
    monkeypatch.setattr("builtins.input", lambda question: asked.append(question) or answer)
    code, out = kata_in(capsys, lang, "reset", "1")
    assert code == (0 if resets else 1), out
    question = i18n.t_in(lang, "reset.confirm", file=stage(1).source("exercises"), n=1)
    assert asked == [i18n.t_in(lang, "prompt.confirm", question=question)]
    assert_in_language(asked[0] + "\n" + out, lang)
    assert (path.read_text(encoding="utf-8") != solved) == resets, (answer, out)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_the_text_tree_of_a_reused_node_is_in_one_language(monkeypatch, lang):
    import importlib

    from autograd_kata.pictures import graph
    Value = importlib.import_module(f"solutions.{STAGES[-1].module}").Value
    monkeypatch.setenv("KATA_LANG", lang)
    i18n.reset()
    a = Value(3.0)
    out = a * a + a
    out.backward()
    tree = graph.text_tree(out, {"a": a})
    assert i18n.t_in(lang, "graph.seen", number=2) in tree, tree  # a is #2, drawn once, then referred to
    assert_in_language(tree, lang)
