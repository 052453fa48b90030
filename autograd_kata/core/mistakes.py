"""The classic mistakes a failure can name, by the phrase it says: one table, read by
the test process and by the class summary.

The test process (the teaching verdicts, ``core/results/verdicts.py``) looks for each
phrase of a failing test's stage in its messages as said in English (they are
``i18n.Text``: said again in English whatever the run's language) and writes the
label id into the results file (``"mistakes"``); ``kata check`` shows a failure
that names a mistake before a crash, and ``kata grade --class`` (its summary,
``classroom/course/outputs.py``) names, per stage, the students whose failures name
each one.  The phrases are the test messages' own words for a classic mistake.  This is
the one table of them: the maintainers' catalogue (``maintainer/mistakes.py``: the code
that makes each mistake, shipped with the sources only) names its rows by id and reads
their stage and phrase here (``named``); ``tooltests/test_mistake_table.py`` checks that
every row has its label in every language and its mistake made in that catalogue.

Each phrase has a label, ``mistake.<id>`` in ``locales/*.po``: what a student
whose failure says that phrase has done, true of **every** way to get that
phrase (two catalogue mistakes with one phrase share one label, which says
what both did; ``tooltests/test_course.py`` checks it).
"""
from __future__ import annotations

from autograd_kata.core.i18n import MESSAGES, t_in
from autograd_kata.core.operations import BY_NAME, rules

#: the stage where rules stop assigning (=) and add (+=): its mistakes come from the operations table
ACCUMULATE = 6

# (stage, phrase in the failure message, the label's id: mistake.<id> in locales/*.po)
PHRASES: tuple[tuple[int, str, str], ...] = (
    (1, 'expected the float 0.0', 'grad-int'),
    (1, 'store float(data)', 'data-not-float'),
    (1, 'expected a set', 'prev-not-set'),
    (1, 'must be refused, not stored', 'no-type-check'),
    (2, 'forgot `* out.grad`', 'add-mul-upstream'),
    (2, 'swapped the partials', 'mul-swapped'),
    (2, 'hands on out.data, not out.grad', 'add-data'),
    (2, 'divides by an operand', 'mul-divides'),
    (3, 'detached from the graph', 'detached-3'),
    (3, 'operands swapped: 1 - v is not v - 1', 'rsub-swapped'),
    (3, 'forgot to negate', 'sub-no-negate'),
    (3, 'return NotImplemented for unsupported operands', 'lift-raises'),
    (3, 'again, for ever', 'reflected-loop'),
    (4, "tanh's slope comes from its output t: 1 - t*t, not from the input x", 'tanh-input'),
    (4, '1 - t*t, not 1 - t', 'tanh-one-minus-t'),
    (4, 'forgot `* out.grad`', 'upstream-4'),
    (4, "exp's slope is its own output e^x, not x", 'exp-input'),
    (4, "ReLU's slope is 0 at and below 0", 'relu-slope'),
    (4, 'exponent off by one?', 'pow-off-by-one'),
    (4, 'a formula through exp or cosh overflows far from 0', 'tanh-overflow'),
    (4, 'not n * out.data / x, which divides by zero', 'pow-divides'),
    (4, 'never a silent inf', 'exp-inf'),
    (4, 'operands swapped: 2 / v is not v / 2', 'rtruediv-swapped'),
    (4, 'detached from the graph', 'detached-4'),
    (5, 'reverse the topological order', 'no-reverse'),
    (5, 'a node is left out', 'order-misses'),
    (5, 'each node once', 'no-visited'),
    (5, 'keep visited in a set', 'visited-list'),
    (5, 'seed the root', 'no-seed'),
    (5, 'a node appended when first reached comes before its inputs', 'append-early'),
    (5, 'your list is exactly outputs-first', 'outputs-first'),
    (5, 'do not raise it', 'recursion-limit'),
    (5, 'RecursionError', 'recursive-sort'),
    # every rule of the operations table (core/operations.py), assigning instead of adding
    *((ACCUMULATE, f'the {op.name} rule assigns (=) instead of adding (+=)', f'{op.name}-assigns') for op in rules()),
    (6, 'the mul rule adds, yet the first share is gone', 'zeroes-every-grad'),
    (7, 'zero_grad() must reset every parameter', 'zero-grad-some'),
    (7, 'but nothing was raised: the first backward() released the graph', 'no-release'),
    (7, 'refuse before any grad changes', 'refuses-late'),
    (7, 'this graph was never walked back', 'refuses-fresh'),
    (7, '1 -> 2 as in PyTorch, not 1 -> 3 as in micrograd', 'one-to-three'),
    (7, 'not the int 0', 'zero-grad-int'),
    (7, 'backward() releases the whole graph, every interior node, not only its root', 'release-root-only'),
    (7, 'seeding with = 1.0 throws the old gradient away', 'seed-equals'),
    (7, 'releases a rule as `_backward = None`', 'release-none'),
    (8, 'the last layer must be linear', 'last-relu'),
    (8, 'hidden layers apply ReLU', 'no-hidden-relu'),
    (8, 'the weighted sum of its inputs plus its bias, once', 'neuron-formula'),
    (8, 'expected a single Value (so that loss', 'never-unwraps'),
    (8, "a layer's inputs are the outputs of the layer before", 'layer-inputs'),
    (8, 'zip(..., strict=True)', 'zip-truncates'),
    (8, 'a 1-wide hidden layer must hand the next layer a list of one Value', 'unwraps-one'),
    (8, 'the same seed gives the same numbers', 'seed-ignored'),
    (8, 'old gradients leak into later steps', 'train-no-zero-grad'),
    (8, 'zeroed after backward() and before the update', 'zero-grad-mid-step'),
    (8, 'leave the global random state alone', 'global-random'),
    (8, '0 is a seed like any other', 'seed-zero'),
    (8, 'let the gradients the model already held into its first step', 'held-grads'),
    (8, 'divide the sum by len(xs)', 'sums-loss'),
    (8, 'uphill', 'climbs'),
    (8, 'store loss.data (a float)', 'keeps-loss-value'),
)


def named(ident: str) -> tuple[int, str]:
    """The stage and the phrase of the table's mistake ``ident`` (``mistake.<ident>``'s id)."""
    found = [(s, p) for s, p, i in PHRASES if i == ident]
    if len(found) != 1:
        raise LookupError(f"{'no' if not found else len(found)} mistakes with the id {ident!r} in core/mistakes.py")
    return found[0]


def label_id(ident: str) -> tuple[str, dict]:
    """The catalogue id and fields of the label of the table's mistake ``ident``: its own
    ``mistake.<ident>``, or, for a rule of the operations table that assigns and has none,
    the one phrasing every rule shares (``mistake.rule-assigns``: "assigns (=) in the log rule")."""
    own = f"mistake.{ident}"
    name = ident.removesuffix("-assigns")
    if own not in MESSAGES.catalogue("en").messages and name in BY_NAME and BY_NAME[name].rule:
        return "mistake.rule-assigns", {"op": name}
    return own, {}


def rule_label(name: str, lang: str = "en") -> str:
    """The label of the mistake 'the ``name`` rule assigns (=)', in ``lang``."""
    msgid, fields = label_id(f"{name}-assigns")
    return t_in(lang, msgid, **fields)


def label(stage: int, phrase: str, lang: str = "en") -> str:
    """What a student whose stage-``stage`` failure says ``phrase`` did, in ``lang``."""
    for s, p, ident in PHRASES:
        if s == stage and p == phrase:
            msgid, fields = label_id(ident)
            return t_in(lang, msgid, **fields)
    return phrase
