"""Small wrong words of issue 30 (item 9), each kept: a number the learner reads as they think
of it, and every explanation of a failing check said once.

They run ``tests/expect.py`` in this process, as a stage test does, with pytest-check's
``check.fail`` replaced by a list, in each language of the catalogue.
"""
from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from test_mistakes import ROOT

from autograd_kata.core import i18n
from autograd_kata.core.i18n import languages, t


@pytest.fixture
def expect(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    import expect as module

    failed: list[str] = []
    monkeypatch.setattr(module, "check", SimpleNamespace(fail=failed.append))
    module.failed = failed
    return module


def speak(monkeypatch, lang):
    monkeypatch.setenv("KATA_LANG", lang)
    i18n.reset()


def test_a_negative_zero_is_shown_as_zero(expect):
    """-0.0 == 0.0: "a.grad is -0, expected 0.75" made the learner look for a sign they never wrote."""
    assert expect.show(-0.0) == "0" and expect.show(0.0) == "0"
    assert expect.show(-0.5) == "-0.5" and expect.show(6.000000000001) == "6"


@pytest.mark.parametrize("lang", languages())
def test_several_wrong_grads_say_their_rule_once(expect, monkeypatch, lang):
    """Stage 5's interior-grads check with four wrong grads said its rule four times, once per node."""
    speak(monkeypatch, lang)
    node = SimpleNamespace
    rule = t("s5.interior_rule")
    expect.Expect(5).grads(rule, ab=(node(grad=0.0), -0.5), c=(node(grad=-0.0), -0.5),
                           a=(node(grad=0.75), 0.75), b=(node(grad=1.0), -0.25))
    (message,) = expect.failed
    assert message.count(str(rule)) == 1, message
    assert all(f"{name}.grad" in message for name in ("ab", "c", "b")) and "a.grad" not in message, message
    assert not re.search(r"-0(?![.\d])", message) and message.count("kata hint 5") == 1, message
    assert message.render("en") == i18n.t_in("en", "expect.hint", n=5, text=i18n.t_in(
        "en", "expect.are_expected", rule=i18n.t_in("en", "s5.interior_rule"),
        wrong="ab.grad is 0, expected -0.5; c.grad is 0, expected -0.5; b.grad is 1, expected -0.25")), \
        "the message is data: said again in English, part by part"


@pytest.mark.parametrize("lang", languages())
def test_the_pow_remark_is_said_once(expect, monkeypatch, lang):
    """The power rule's "exponent off by one?" remark is in its rule and in its mistake's phrase:
    with the mistake's numbers the message says it once (in Japanese it said it twice)."""
    speak(monkeypatch, lang)
    x0, n, up = 1.5, 3, -2.0
    short = t("s4.pow.rule_short")
    expect.Expect(4).grads(t("s4.pow.rule"), [(short, {"x": n * x0 ** n * up})],
                           x=(SimpleNamespace(grad=n * x0 ** n * up), n * x0 ** (n - 1) * up))
    (message,) = expect.failed
    remark = short[short.index("x**(n-1)") + len("x**(n-1)"):].strip(" です")
    assert remark and message.count(remark) == 1, message
