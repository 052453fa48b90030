"""A learner on Windows, simulated where Windows is not at hand (CI's learner loop runs
the real thing, .github/workflows/ci.yml):

- a pipe there takes the ANSI code page, which cannot show Japanese: the pytest child
  must still write (and ``kata`` read) UTF-8, so its messages are not English under a
  Japanese frame (simulated with ``PYTHONIOENCODING=cp1252``, what the child would inherit);
- there is no SIGALRM, so pytest-timeout's thread method ends the whole run at a hang:
  ``kata check`` says where the learner's code was and what to do next, never pytest's
  stack dump (simulated with ``timeout_method=thread``, what pytest-timeout picks there);
- an old console shows ``\\033[...`` codes as text: colour and ``kata watch``'s clearing of
  the screen only where the console takes them or can be told to (a stand-in for the
  console API: ``sys.platform``, ``msvcrt`` and ``ctypes.windll``).
"""
from __future__ import annotations

import ctypes
import io
import sys
import types

import pytest

from autograd_kata.core import i18n, runner, state, term
from autograd_kata.core.build import strip_markers
from autograd_kata.core.manifest import stage
from kit import kata_copy, run_kata

ENV_VARS = ("NO_COLOR", "FORCE_COLOR", "KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "PYTEST_ADDOPTS",
            "PYTEST_PLUGINS", "TERM", "PYTHONIOENCODING", "PYTHONUTF8")

pytestmark = pytest.mark.timeout(120)  # the runner's tests run pytest in a child process


@pytest.fixture
def kata(tmp_path, monkeypatch):
    yield kata_copy(tmp_path, monkeypatch, ENV_VARS)
    i18n.reset()


# --- the pytest child's pipe ------------------------------------------------------------------

def test_under_an_ansi_code_page_the_childs_messages_are_still_in_the_learners_language(kata, monkeypatch):
    monkeypatch.setenv("PYTHONIOENCODING", "cp1252")  # what a Windows pipe gives the child
    monkeypatch.setenv("KATA_LANG", "ja")
    i18n.reset()
    assert runner.child_env("exercises")["PYTHONIOENCODING"] == "utf-8"
    got = state.spoken(runner.run("exercises", [stage(1)], kata)[1])  # as the learner's commands read it
    messages = {test.message for test in got.tests if test.message}
    assert messages and all("まだ書かれていません" in m for m in messages), sorted(messages)[:2]
    assert not any("not written yet" in m for m in messages)


def test_the_simulation_is_faithful_a_cp1252_child_falls_back_to_english(kata, monkeypatch):
    """A cp1252 child writes English words (the results are English data in any case: the child
    speaks English, runner.child_env); they are said in Japanese when read, pipe or no pipe."""
    monkeypatch.setenv("KATA_LANG", "ja")
    i18n.reset()
    env = {**runner.child_env("exercises"), "PYTHONIOENCODING": "cp1252"}
    monkeypatch.setattr(runner, "child_env", lambda impl: env)
    got = runner.run("exercises", [stage(1)], kata)[1]
    assert any("not written yet" in test.message for test in got.tests)
    assert all("まだ書かれていません" in test.message for test in state.spoken(got).tests if test.message)


# --- a hang with pytest-timeout's thread method --------------------------------------------------

def forgot_to_pop(text: str) -> str:
    """Stage 5's topological order peeks at the stack instead of popping: it never ends."""
    changed = (text.replace("node, inputs_done = stack.pop()", "node, inputs_done = stack[-1]  # forgot to pop")
                   .replace("order.append(node)", "if node not in order:\n                    order.append(node)"))
    assert changed != text, "the edit did not apply: the reference changed under this test"
    return changed


@pytest.mark.parametrize("lang, footer", [
    ("en", "The other tests of stage 5 were not run. -> kata hint 5"),
    ("ja", "ステージ 5 のほかのテストは実行していません。-> kata hint 5"),
])
def test_a_hang_that_ends_the_whole_run_shows_the_line_and_the_way_on_not_pytests_dump(
        kata, capsys, monkeypatch, lang, footer):
    s = stage(5)
    (kata / s.source("exercises")).write_text(forgot_to_pop(strip_markers(
        (kata / s.source("solutions")).read_text(encoding="utf-8"))), encoding="utf-8")
    command = runner.pytest_command
    monkeypatch.setattr(runner, "pytest_command",  # what pytest-timeout picks where there is no SIGALRM
                        lambda *a, **k: [*command(*a, **k), "-o", "timeout_method=thread"])
    code, out, err = run_kata(capsys, "--lang", lang, "check", "5")
    assert code == 1, out + err
    lines = out.strip().splitlines()
    assert lines[0].startswith(("✗ Stage 5", "✗ ステージ 5")) and "exercises/stage05_backward.py:" in lines[0], out
    assert lines[-1].strip() == footer, out
    for dump in ('File "', "site-packages", "Timeout +", "pytest exited", "Traceback"):
        assert dump not in out, f"pytest's own output shown ({dump!r}):\n{out}"
    assert len(lines) <= 3, out


# --- a console that does or does not take escape codes -------------------------------------------

class Console(io.StringIO):
    """stdout on a Windows console: a tty with a file descriptor."""

    def isatty(self):
        return True

    def fileno(self):
        return 1


class Kernel32:
    """The two console calls term.vt_console makes: a console in ``mode`` that takes a new
    mode only if ``settable``; ``mode=None``: not a console."""

    def __init__(self, mode: int | None, settable: bool):
        self.mode, self.settable, self.set_to = mode, settable, None

    def GetConsoleMode(self, handle, pointer):  # noqa: N802 - the Windows API's name
        if self.mode is None:
            return 0
        pointer._obj.value = self.mode
        return 1

    def SetConsoleMode(self, handle, mode):  # noqa: N802
        self.set_to = mode
        return 1 if self.settable else 0


@pytest.fixture
def windows(monkeypatch):
    """sys.platform is win32 and the console is the returned stand-in's to set up."""
    for var in ("NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(var, raising=False)
    kernel = Kernel32(0x0003, settable=False)
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setitem(sys.modules, "msvcrt", types.SimpleNamespace(get_osfhandle=lambda fd: 1000 + fd))
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(kernel32=kernel), raising=False)
    return kernel


def test_an_old_console_that_refuses_escape_codes_gets_plain_text(windows):
    console = Console()
    assert term.cursor_ok(console) is False and term.use_colour(console) is False
    assert windows.set_to == 0x0003 | term.ENABLE_VIRTUAL_TERMINAL_PROCESSING  # it was asked, and said no


def test_a_console_whose_escape_codes_can_be_turned_on_gets_them_turned_on(windows):
    windows.settable = True
    assert term.cursor_ok(Console()) is True and term.use_colour(Console()) is True
    assert windows.set_to == 0x0003 | term.ENABLE_VIRTUAL_TERMINAL_PROCESSING


def test_a_console_that_takes_them_already_is_left_as_it_is(windows):
    windows.mode = 0x0007
    assert term.cursor_ok(Console()) is True and windows.set_to is None


def test_a_handle_that_is_no_console_gets_no_codes_but_force_color_still_forces(windows, monkeypatch):
    windows.mode = None
    assert term.cursor_ok(Console()) is False and term.use_colour(Console()) is False
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert term.use_colour(Console()) is True


def test_kata_watch_clears_the_screen_only_where_the_console_takes_the_code(kata, windows, monkeypatch):
    from autograd_kata.learner import watch as watching

    def once(*args):
        raise KeyboardInterrupt  # the learner presses Ctrl+C after the first run
    monkeypatch.setattr(watching, "wait_for_change", once)
    for settable, cleared in ((False, False), (True, True)):
        windows.settable = settable
        console = Console()
        monkeypatch.setattr(sys, "stdout", console)
        assert watching.watch(kata, stage(1), poll=True) == 0
        shown = console.getvalue()
        assert ("\033[2J" in shown) is cleared and ("\033[" in shown) is cleared, repr(shown[:200])
        assert "Stage 1" in shown, shown
