"""Feel the answers, from the learner's source alone (``feel.py`` runs it): on stages 2-5,
which assign on purpose, the article's ``+=`` is right too, and if the learner's own rules
already add, that they are ready for the stage that needs it.  Read in this process, never run."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from autograd_kata.core.i18n import t


def _stage_showing(name: str):
    """The (first) stage whose manifest entry shows demonstration ``name``."""
    from autograd_kata.core.manifest import STAGES
    return next(s for s in STAGES if name in s.feel)


# --- plus_equals: the article's += while stages 2-5 assign ------------------------

def _own_methods(stage, root: Path) -> set[str] | None:
    """``Class.method`` names that the stage's untouched stub leaves to the learner
    (their body raises NotImplementedError); None if the stub cannot be found."""
    from autograd_kata.core.state import pristine_stub
    try:
        tree = ast.parse(pristine_stub(stage, root))
    except Exception:  # noqa: BLE001 - no stub to compare with: every rule counts
        return None
    own = set()
    for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
        for fn in (node for node in cls.body if isinstance(node, ast.FunctionDef)):
            if any(isinstance(node, ast.Raise) and "NotImplementedError" in ast.unparse(node)
                   for node in ast.walk(fn)):
                own.add(f"{cls.name}.{fn.name}")
    return own


def grad_writes(source: str, own: set[str] | None = None) -> tuple[int, int]:
    """How the gradient rules in ``source`` write a ``.grad``: (with ``+=``, with ``=``).
    A rule is a function defined inside a method (a closure); only the methods in
    ``own`` count, if it is given."""
    adds = assigns = 0
    for cls in (node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)):
        for method in (node for node in cls.body if isinstance(node, ast.FunctionDef)):
            if own is not None and f"{cls.name}.{method.name}" not in own:
                continue
            rules = [node for node in ast.walk(method) if isinstance(node, ast.FunctionDef) and node is not method]
            for node in (node for rule in rules for node in ast.walk(rule)):
                if (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
                        and isinstance(node.target, ast.Attribute) and node.target.attr == "grad"):
                    adds += 1
                elif isinstance(node, ast.Assign) and any(isinstance(target, ast.Attribute) and target.attr == "grad"
                                                         for target in node.targets):
                    assigns += 1
    return adds, assigns


def plus_equals(stage, root: Path) -> list[str]:
    """One line: the article's += is right and stays right; the learner's own rules
    already add, if they do."""
    n = _stage_showing("accumulate").number
    try:
        source = (root / stage.source("exercises")).read_text(encoding="utf-8")
        adds, assigns = grad_writes(source, _own_methods(stage, root))
        if not adds + assigns:  # no rule of the learner's own (stages 3, 5): the module's given ones, as they are now
            adds, assigns = grad_writes(source)
    except (OSError, SyntaxError, ValueError):
        adds, assigns = 0, 0
    if adds and not assigns:
        return [t("feel.plus_equals_yours", n=n)]
    return [t("feel.plus_equals", n=n)]


# --- =+ : the typo of += that Python reads as = + ----------------------------------

def plus_typos(stage, root: Path) -> list[str]:
    """A line for each ``x.grad =+ ...`` of the learner's module: Python reads it as
    ``x.grad = +...``, an assignment, so a failure that says a rule assigns (=) is that typo."""
    try:
        source = (Path(root) / stage.source("exercises")).read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign)
                and any(isinstance(target, ast.Attribute) and target.attr == "grad" for target in node.targets)
                and (ast.get_source_segment(source, node.value) or "").startswith("+")
                and re.search(r"\.grad\s*=\+", lines[node.lineno - 1])):
            found.append(t("check.plus_typo", file=stage.source("exercises"), line=node.lineno,
                           code=lines[node.lineno - 1].strip()))
    return found
