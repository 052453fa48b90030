"""One classic mistake as the catalogue (``maintainer/mistakes.py``) makes it: what the
learner did and the exact text it changes in the reference; and the mistakes made from
the operations table's rows rather than written by hand (``rule_assigns``)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autograd_kata.core.manifest import stage
from autograd_kata.core.mistakes import ACCUMULATE, named, rule_label
from autograd_kata.core.operations import Operation

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Mistake:
    id: str       # short, unique, for test ids
    named: str    # the classic mistake it makes: its id in core/mistakes.py's table (PHRASES)
    says: str     # the mistake, as a learner would describe what they did
    old: str      # exact text of solutions/stageNN_*.py, found exactly once
    new: str      # what the mistaken learner wrote instead

    @property
    def stage(self) -> int:
        return named(self.named)[0]

    @property
    def phrase(self) -> str:
        """The failing stage's output must contain this."""
        return named(self.named)[1]


def rule_assigns(op: Operation) -> Mistake:
    """``<name>-rule-assigns``: ``op``'s rule in the accumulating stage's reference with its
    first share assigned (=) instead of added (+=), as stages 2-5 wrote it.  Made from the
    operations table's row and the reference itself, so a new rule gets its mistake with
    no entry written here; its phrase and label are ``core/mistakes.py``'s."""
    where = stage(ACCUMULATE).source("solutions")
    source = (ROOT / where).read_text(encoding="utf-8")
    start = source.find(f"    def {op.defined_in}(")
    if start < 0:
        raise LookupError(f"{where} has no Value.{op.defined_in}, the rule of the operations table's {op.name!r}")
    end = source.find("\n    def ", start + 1)
    body = source[start:end if end > 0 else len(source)]
    shares = re.findall(r"\b\w+\.grad \+= .*?# STUB:", body)
    if not shares:
        raise LookupError(f"{where}: Value.{op.defined_in} has no 'x.grad += ...  # STUB:' line, "
                          f"the rule of {op.name!r} as reference/engine.py writes it ('# before 6:')")
    return Mistake(f"{op.name}-rule-assigns", f"{op.name}-assigns", rule_label(op.name, "en"),
                   shares[0], shares[0].replace(" += ", " = ", 1))
