"""Every operation of the engine, declared once: the one table the tests and tools read.

An operation is a step of a random graph (tests/graphs.py), a gradient rule stage 6
checks one at a time (when it has a closure of its own), a method the picture tool
may call (``kata graph --expr 'a.log()'``) and an op the PyTorch parity test compares
(tooltests/test_pytorch_parity.py).  Adding one is a recipe (README, maintainers'
section, "Adding an operation"), and tooltests/test_operations.py follows it.

Data only: this module imports nothing of the kata, so tests/ and the package both
read it without the package ever importing tests/.  Each field is a plain value or
a small function on plain floats (the judge's arithmetic), or on whatever ``value``
is given (the engine's Values, or PyTorch's tensors in the parity test).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

#: constants a random graph draws for an op with a constant operand, and for ``**``
CONSTANTS = (-1.5, -0.5, 0.5, 2, 3)
EXPONENTS = (2, 3, -1, 0.5)


def _anywhere(xs, c) -> bool:
    return True


@dataclass(frozen=True)
class Explore:
    """How the slope explorer (``kata explore``, autograd_kata/pictures/explore.html) draws a
    one-operand operation: JavaScript expressions the page is written with."""
    #: the curve, of ``x``: ``Math.tanh(x)``
    curve: str
    #: its slope read off the output ``t`` alone, as the rule's closure does: ``1 - t * t``
    slope: str
    #: the readout, of ``t`` and ``s`` (the slope; ``f4`` formats, ``say`` reads the catalogue)
    readout: str
    #: the outputs the curve takes (where the side panel draws the slope): ``Math.abs(t) < 1``
    outputs: str
    #: the view: x's range, the output's, the slope's
    xr: tuple[float, float]
    yr: tuple[float, float]
    sr: tuple[float, float]
    #: its explanation's catalogue id; None: ``explore.explain.<name>`` if there is one, else the shared one
    explain: str | None = None


@dataclass(frozen=True)
class Operation:
    #: the step's name in a random graph (``("tanh", (3,), c)``) and in messages
    name: str
    #: the stage that adds it (each later stage keeps it)
    stage: int
    #: how many Values it takes: 2 for ``a * b``; 1 for ``a.tanh()`` and ``a * 0.5``
    arity: int
    #: the value on plain floats: ``forward(xs, c)``, xs the Values' data, c the constant
    forward: Callable[[list[float], float], float]
    #: the local slopes on plain floats, one per Value operand
    derivative: Callable[[list[float], float], tuple[float, ...]]
    #: the same step on anything with the engine's operators and methods (Values, tensors)
    value: Callable[[list, float], object]
    #: the step as a formula: ``{0}``, ``{1}`` the operands, ``{c}`` the constant
    text: str
    #: the constants a random graph draws for it (empty: it has none)
    consts: tuple[float, ...] = ()
    #: a random graph uses it only where this holds: away from a kink, a pole or an overflow,
    #: where central differences are accurate
    smooth: Callable[[list[float], float], bool] = _anywhere
    #: the Value method it is (``tanh``), which ``kata graph --expr`` may call; None: an operator
    method: str | None = None
    #: it has a gradient closure of its own (stage 6 checks that each such rule adds, +=);
    #: False: the engine writes it from other ops (``a - b`` is ``a + (-b)``)
    rule: bool = False
    #: the constant a fixed example uses (stage 6's rule-by-rule probe: ``a ** 3``)
    example: float = 0.0
    #: its PyTorch twin, a function of (torch, xs, c); None: ``value`` on tensors is the twin
    twin: Callable[..., object] | None = None
    #: the Value method whose closure is its rule (``__mul__``); None: ``method``
    function: str | None = None
    #: the label its node gets (``_op``: ``'ReLU'``); None: ``method``
    label: str | None = None
    #: how the slope explorer draws it; None: the explorer leaves it out
    explore: Explore | None = None

    @property
    def defined_in(self) -> str | None:
        """The Value method that writes it (its rule's closure, for a rule)."""
        return self.function or self.method

    @property
    def node_label(self) -> str | None:
        return self.label or self.method


OPERATIONS: tuple[Operation, ...] = (
    # stage 2: the two rules every other op is built on
    Operation("add", 2, 2, lambda xs, c: xs[0] + xs[1], lambda xs, c: (1.0, 1.0),
              lambda xs, c: xs[0] + xs[1], "{0} + {1}", rule=True, function="__add__"),
    Operation("mul", 2, 2, lambda xs, c: xs[0] * xs[1], lambda xs, c: (xs[1], xs[0]),
              lambda xs, c: xs[0] * xs[1], "{0} * {1}", rule=True, function="__mul__"),
    # stage 3: constants on either side, negation, subtraction (all written from + and *)
    Operation("neg", 3, 1, lambda xs, c: -xs[0], lambda xs, c: (-1.0,),
              lambda xs, c: -xs[0], "-{0}"),
    Operation("sub", 3, 2, lambda xs, c: xs[0] - xs[1], lambda xs, c: (1.0, -1.0),
              lambda xs, c: xs[0] - xs[1], "{0} - {1}"),
    Operation("add_n", 3, 1, lambda xs, c: xs[0] + c, lambda xs, c: (1.0,),
              lambda xs, c: xs[0] + c, "{0} + {c}", consts=CONSTANTS),
    Operation("n_add", 3, 1, lambda xs, c: c + xs[0], lambda xs, c: (1.0,),
              lambda xs, c: c + xs[0], "{c} + {0}", consts=CONSTANTS),
    Operation("mul_n", 3, 1, lambda xs, c: xs[0] * c, lambda xs, c: (c,),
              lambda xs, c: xs[0] * c, "{0} * {c}", consts=CONSTANTS),
    Operation("n_mul", 3, 1, lambda xs, c: c * xs[0], lambda xs, c: (c,),
              lambda xs, c: c * xs[0], "{c} * {0}", consts=CONSTANTS),
    Operation("sub_n", 3, 1, lambda xs, c: xs[0] - c, lambda xs, c: (1.0,),
              lambda xs, c: xs[0] - c, "{0} - {c}", consts=CONSTANTS),
    Operation("n_sub", 3, 1, lambda xs, c: c - xs[0], lambda xs, c: (-1.0,),
              lambda xs, c: c - xs[0], "{c} - {0}", consts=CONSTANTS),
    # stage 4: the closure that remembers its output, then the same recipe for the rest
    Operation("tanh", 4, 1, lambda xs, c: math.tanh(xs[0]), lambda xs, c: (1 - math.tanh(xs[0]) ** 2,),
              lambda xs, c: xs[0].tanh(), "{0}.tanh()", method="tanh", rule=True,
              twin=lambda torch, xs, c: torch.tanh(xs[0]),
              explore=Explore("Math.tanh(x)", "1 - t * t",
                              '"1 - t\\u00b2 = 1 - (" + f4(t) + ")\\u00b2 = " + f4(s)', "Math.abs(t) < 1",
                              (-3, 3), (-1.25, 1.25), (0, 1.1))),
    Operation("exp", 4, 1, lambda xs, c: math.exp(xs[0]), lambda xs, c: (math.exp(xs[0]),),
              lambda xs, c: xs[0].exp(), "{0}.exp()",
              smooth=lambda xs, c: xs[0] < 3.0, method="exp", rule=True,
              twin=lambda torch, xs, c: torch.exp(xs[0]),
              explore=Explore("Math.exp(x)", "t", 'say("explore.exp_formula", { slope: f4(s) })', "t >= 0",
                              (-3, 2), (-0.5, 7.6), (0, 7.6))),
    Operation("relu", 4, 1, lambda xs, c: max(xs[0], 0.0), lambda xs, c: (float(xs[0] > 0),),
              lambda xs, c: xs[0].relu(), "{0}.relu()",
              smooth=lambda xs, c: abs(xs[0]) > 0.05, method="relu", rule=True, label="ReLU",
              twin=lambda torch, xs, c: torch.relu(xs[0]),
              explore=Explore("x > 0 ? x : 0", "t > 0 ? 1 : 0", '"out > 0 ? 1 : 0 = " + f4(s)', "t >= 0",
                              (-3, 3), (-0.5, 3.2), (0, 1.2))),
    Operation("pow", 4, 1, lambda xs, c: xs[0] ** c, lambda xs, c: (c * xs[0] ** (c - 1),),
              lambda xs, c: xs[0] ** c, "{0} ** {c}", consts=EXPONENTS,
              smooth=lambda xs, c: abs(xs[0]) > 0.2 and (xs[0] > 0.2 or float(c).is_integer()),
              rule=True, example=3, function="__pow__"),
    Operation("div", 4, 2, lambda xs, c: xs[0] / xs[1], lambda xs, c: (1 / xs[1], -xs[0] / xs[1] ** 2),
              lambda xs, c: xs[0] / xs[1], "{0} / {1}", smooth=lambda xs, c: abs(xs[1]) > 0.2),
    Operation("div_n", 4, 1, lambda xs, c: xs[0] / c, lambda xs, c: (1 / c,),
              lambda xs, c: xs[0] / c, "{0} / {c}", consts=CONSTANTS),
    Operation("n_div", 4, 1, lambda xs, c: c / xs[0], lambda xs, c: (-c / xs[0] ** 2,),
              lambda xs, c: c / xs[0], "{c} / {0}", consts=CONSTANTS, smooth=lambda xs, c: abs(xs[0]) > 0.2),
)

#: by name
BY_NAME = {op.name: op for op in OPERATIONS}


def up_to(stage: int) -> tuple[Operation, ...]:
    """The operations a stage's engine has: its own and every earlier stage's."""
    return tuple(op for op in OPERATIONS if op.stage <= stage)


def rules() -> tuple[Operation, ...]:
    """The operations with a gradient closure of their own, in table order."""
    return tuple(op for op in OPERATIONS if op.rule)


def explored() -> tuple[Operation, ...]:
    """The operations the slope explorer draws, in table order."""
    return tuple(op for op in OPERATIONS if op.explore is not None)


def methods() -> tuple[str, ...]:
    """The Value methods ``kata graph --expr`` may call."""
    return tuple(op.method for op in OPERATIONS if op.method)


def rule_lines(stage: int) -> int:
    """How many lines hand a share to a parent in a stage's engine (``self.grad += ... out.grad``):
    one per Value operand of every rule it has."""
    return sum(op.arity for op in rules() if op.stage <= stage)
