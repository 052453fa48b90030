"""Teaching assertions for the stage tests.

Every failure says what was expected, what came, which rule broke, and where
the hint is, in the learner's language: every sentence comes from the message
catalogue (``autograd_kata/locales/*.po``, ids ``expect.*``), so the rule and
mistake texts a test passes in come from it too, and ``Expect.grads`` can find
a mistake's phrase inside a rule in any language.  ``Expect.grads`` reports every wrong gradient of a check at once,
in one message that says the rule they break once (through pytest-check, so the test's other checks still run).
"""
from __future__ import annotations

import math
import os

from pytest_check import check

from autograd_kata.core.i18n import joined, t

# RuleBroken: a failed expectation whose message is the whole story (no traceback needed);
# SAID: every failure message of the running test, as said (i18n.Text), which the teaching
# verdicts read after the test to record the messages as data and the mistake they name.
from autograd_kata.core.results.verdicts import SAID, RuleBroken

TOL = 1e-6




def close(got, want, tol=TOL):
    try:
        return math.isclose(float(got), float(want), rel_tol=tol, abs_tol=tol)
    except (TypeError, ValueError):
        return False


def show(x):
    """A number as a learner wants to read it: 6.0, -0.419974, not 6.000000000001."""
    if isinstance(x, float):
        return f"{x + 0.0:.6g}"  # + 0.0: -0.0 is shown 0, as the learner thinks of it
    return repr(x)


class Expect:
    """Assertions that end every message with the stage's hint command."""

    def __init__(self, stage: int):
        self.stage = stage

    def _say(self, text: str) -> str:
        said = t("expect.hint", text=text, n=self.stage)
        SAID.append(said)
        return said

    def fail(self, text: str):
        raise RuleBroken(self._say(text))

    def true(self, condition, text: str):
        if not condition:
            self.fail(text)

    def equal(self, got, want, what: str, rule: str):
        """``got == want`` (floats within 1e-6); otherwise fail naming ``what`` and ``rule``."""
        same = close(got, want) if isinstance(want, float) else got == want
        if not same:
            self.fail(t("expect.is_expected", what=what, got=show(got), want=show(want), rule=rule))

    def grads(self, rule: str, mistakes=(), **nodes):
        """Each keyword is ``name=(value_node, expected_grad)``; all wrong ones are reported.

        ``mistakes`` holds ``(phrase, {name: wrong_grad})`` pairs: when the grads
        that came are exactly what a classic mistake gives, the message names it."""
        for phrase, wrong in mistakes:
            if all(close(getattr(nodes[name][0], "grad", None), g) for name, g in wrong.items()):
                # both texts come from the catalogue in one language, so a phrase the rule
                # already names is found inside it in Japanese as in English
                if phrase in rule:
                    rule = t("expect.exactly_that_mistake", rule=rule)
                else:
                    rule = t("expect.classic_mistake", rule=rule, phrase=phrase)
                break
        off = [(f"{name}.grad", getattr(node, "grad", None), want) for name, (node, want) in nodes.items()
                 if not close(getattr(node, "grad", None), want)]
        if len(off) == 1:
            (what, got, want), = off
            check.fail(self._say(t("expect.is_expected", what=what, got=show(got), want=show(want), rule=rule)))
        elif off:  # every wrong grad, and the rule they break said once
            check.fail(self._say(t("expect.are_expected", rule=rule, wrong=joined(
                [t("expect.got_want", what=what, got=show(got), want=show(want)) for what, got, want in off],
                t("expect.list_sep")))))

    CRASH = object()  # ``raises(..., otherwise=Expect.CRASH)``: another exception is a crash, shown as one

    def raises(self, error, action, rule: str, otherwise=None):
        """``action()`` must raise ``error`` (a type or a tuple of types); returns the exception.

        Another exception is reported with ``otherwise`` instead of ``rule`` when given: a
        crash elsewhere proves nothing about the rule, so it must not be blamed on it.  With
        ``otherwise=Expect.CRASH`` (the test has proven the rule's own piece right) it is let
        through as the crash it is, so its message says the learner's line; so is a
        RecursionError always: a function that calls itself is never the rule's wrong answer."""
        wanted = t("expect.or").join(e.__name__ for e in (error if isinstance(error, tuple) else (error,)))
        try:
            action()
        except error as raised:
            return raised
        except (NotImplementedError, RecursionError):
            raise
        except Exception as other:  # noqa: BLE001 - we report what came instead
            if otherwise is Expect.CRASH:
                raise
            self.fail(t("expect.raised_other", wanted=wanted, kind=type(other).__name__, error=other,
                        rule=otherwise or rule))
        self.fail(t("expect.raised_nothing", wanted=wanted, rule=rule))


#: where a row's default test reads it: the first two that are in its domain and smooth
TABLE_POINTS = (0.8, -1.3, 1.5, 2.2, 0.35)


def expect_table_method(expect: Expect, engine, op, upstream: float = -1.5) -> None:
    """The default test of a row of the operations table (autograd_kata/core/operations.py)
    that is a Value method of one operand: at two points of its domain, ``x.<method>()`` is a
    new Value with the one parent x, the row's label and value, and its rule, run on its own,
    hands x the row's slope times out.grad (forgetting out.grad is named as that mistake)."""
    points = [x0 for x0 in TABLE_POINTS if op.smooth([x0], 0.0)][:2]
    for x0 in points:
        x = engine.Value(x0)
        what = f"Value({x0}).{op.method}()"
        out = getattr(x, op.method)()
        expect.true(isinstance(out, engine.Value), t("s2.new_value", expr=what, got=repr(out)))
        expect.equal(out._prev, {x}, f"{what}._prev", t("s4.one_parent"))
        expect.equal(out._op, op.node_label, f"{what}._op", t("s2.label", op=repr(op.node_label)))
        expect.equal(out.data, float(op.forward([x0], 0.0)), f"{what}.data", t("op.value", method=op.method))
        (slope,) = op.derivative([x0], 0.0)
        out.grad = upstream
        out._backward()
        expect.grads(t("op.slope", method=op.method, slope=show(slope)),
                     [(t("s2.m.forgot_upstream"), {"x": slope})], x=(x, slope * upstream))


def backprop(root, upstream=1.0):
    """Run every node's own ``_backward`` outputs-first, with ``root.grad = upstream``.

    The order is the test's own (not the learner's ``backward()``), so stages 2
    to 4 can test gradient rules before stage 5 exists."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in node._prev)
    root.grad = upstream
    for node in reversed(order):
        node._backward()
    return order


def numeric_grads(f, *xs, h=1e-6):
    """Central differences of ``f(*floats) -> float`` at ``xs``: an independent truth."""
    grads = []
    for i in range(len(xs)):
        up = list(xs)
        down = list(xs)
        up[i] += h
        down[i] -= h
        grads.append((f(*up) - f(*down)) / (2 * h))
    return grads



def in_engine(fn):
    """A **builder**: run ``fn(engine, *args)`` where the engine lives, and return the objects it built.

    In a learner's run that is this process; when grading, the submitted code
    runs in a sandbox process and ``engine`` is a proxy for it, so a test that
    must *define* code on top of the engine (a ``Module`` subclass, an operand
    of a type Value does not know) puts that code in a function decorated with
    ``@in_engine``: the grader ships its source to the sandbox.  So ``fn`` must
    be self-contained: it may use its arguments, builtins and modules it imports
    inside itself, never names of the test module; its arguments are numbers,
    strings, bools, None, containers of them, or engine objects.

    The judge decides, the sandbox observes: a builder's result holds engine
    objects only (handles, when grading), or is None - never a number, a string
    or a bool, which the sandbox could simply say.  Every value a test compares
    it reads from those objects itself, after its own calls (``backward()``,
    ``zero_grad()``), against what it computed itself; ``Builder`` refuses any
    other result, here as in the sandbox.  What the sandbox can only say about
    itself (its recursion limit, the global random state, a count of calls) is
    a **witness** (``@in_engine.witness``): ``tooltests/test_judge_decides.py``
    lets a witness be read only by a test marked ``advisory`` (reported, worth
    no points under grading) or by a guard (a function that can fail a test and
    returns nothing, so a forged witness cannot pass one)."""
    return Builder(fn)


class Builder:
    """``@in_engine``: ``fn`` run where the engine lives; its result checked to be engine objects."""

    witness = False

    def __init__(self, fn):
        self.source_function = fn
        self.__name__, self.__doc__ = fn.__name__, fn.__doc__

    def __call__(self, engine, *args):
        remote = getattr(engine, "__kata_remote__", None)
        result = remote.call_source(self.source_function, args) if remote is not None \
            else self.source_function(engine, *args)
        if not self.witness:
            refuse_data(self.__name__, result)
        return result


class Witness(Builder):
    """``@in_engine.witness``: what the sandbox says about itself, raw (numbers, strings, types)."""

    witness = True


in_engine.witness = Witness  # type: ignore[attr-defined]

DATA = (bool, int, float, complex, str, bytes)


def refuse_data(name, result):
    """A builder's result must hold no data: a verdict on it would be the sandbox's word."""
    if result is None:
        return
    todo = [result]
    while todo:
        item = todo.pop()
        if isinstance(item, (list, tuple, set, frozenset)):
            todo.extend(item)
        elif isinstance(item, dict):
            todo.extend([*item, *item.values()])
        elif item is None or isinstance(item, DATA):
            raise TypeError(f"@in_engine function {name} returned {type(item).__name__} {item!r}: a builder "
                            f"returns engine objects only, and the test reads their values itself "
                            f"(a sandbox's own report is an @in_engine.witness; tests/expect.py)")


def hidden_seed(fixed):
    """The seed that picks a test's shapes and constants: ``KATA_HIDDEN_SEED`` when grading (so a
    forged answer cannot be written in advance), else ``fixed`` (the same every run)."""
    hidden = os.environ.get("KATA_HIDDEN_SEED")
    return int(hidden) if hidden and hidden.lstrip("-").isdigit() else fixed
