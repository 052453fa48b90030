"""Draw the computation graph behind a Value.

    from autograd_kata.pictures.graph import draw
    L = (a*b + c).tanh()
    L.backward()
    draw(L)                      # .kata/graph.svg with Graphviz, else a text tree
    draw(L, "graph.png")         # .svg, .png, .pdf (Graphviz); .dot (source); .txt (tree)
    draw(L, names={"a": a, "b": b, "c": c, "L": L})   # name the boxes

One box per Value, showing its data and grad; a small oval for the operation
that made it (its ``_op``); arrows run from inputs to outputs, the way the
forward pass goes (backward() walks them the other way).

Only the attributes every stage has are read - ``data``, ``grad``, ``_prev``
and ``_op`` - so a Value from any stage module (or from micrograd) can be
drawn, before or after backward(). Pictures need Graphviz's ``dot`` program
(https://graphviz.org/download/); without it you get the text tree.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from autograd_kata.core.i18n import t
from autograd_kata.core.operations import OPERATIONS

GRAPHVIZ_FORMATS = ("svg", "png", "pdf")
MAX_TEXT_NODES = 300  # a text tree longer than this is cut, with a count of the rest
MAX_PICTURE_NODES = 1000  # Graphviz takes ~10 s at 2,000 nodes, and no one can read that picture


def find_dot() -> str | None:
    """The path of Graphviz's ``dot`` program, or None."""
    return shutil.which("dot")


# ---------------------------------------------------------------- the graph

#: the labels of the nodes of two-operand operations with a node of their own (``+``, ``*``: the
#: operator of their formula): such a node with one child in ``_prev`` has it as both operands
BINARY = frozenset(op.node_label or op.text.format("", "").strip() for op in OPERATIONS if op.arity == 2 and op.rule)

def _prev(node) -> tuple:
    return tuple(getattr(node, "_prev", ()) or ())


def _fmt(x) -> str:
    if isinstance(x, (int, float)):
        return f"{x:.4f}"
    return "-" if x is None else str(x)


class Graph:
    """The nodes reachable from a root, numbered outputs-first, with names.

    Walks ``_prev`` with an explicit stack (a 100,000-op chain is fine) and
    keys nodes by ``id()``, so a Value that defines ``__eq__`` still works."""

    def __init__(self, root, names=None):
        self.root = root
        self.names: dict[int, str] = {}
        for name, value in (names or {}).items():
            self.names.setdefault(id(value), name)
        self.nodes: list = []            # in discovery order, root first
        self.index: dict[int, int] = {}  # id(node) -> position in nodes
        self.children: dict[int, list] = {}
        stack = [root]
        while stack:
            node = stack.pop()
            if id(node) in self.index:
                continue
            self.index[id(node)] = len(self.nodes)
            self.nodes.append(node)
            kids = sorted(_prev(node), key=self._sort_key)
            if len(kids) == 1 and self.op(node) in BINARY:  # a*a: _prev is the set {a}, yet a is both operands
                kids *= 2
            self.children[id(node)] = kids
            stack.extend(reversed(kids))

    def _sort_key(self, node):
        # _prev is a set, whose order changes from run to run: sort for stable pictures
        name = self.names.get(id(node))
        data = getattr(node, "data", 0.0)
        return (name is None, name or "", str(getattr(node, "_op", "")),
                data if isinstance(data, (int, float)) else 0.0)

    def name(self, node) -> str:
        return self.names.get(id(node), "")

    def op(self, node) -> str:
        return str(getattr(node, "_op", "") or "")

    def label(self, node) -> str:
        """``a  data 2.0000  grad -3.0000`` - what one box says."""
        parts = [self.name(node)] if self.name(node) else []
        parts.append(f"data {_fmt(getattr(node, 'data', None))}")
        parts.append(f"grad {_fmt(getattr(node, 'grad', None))}")
        return "  ".join(parts)


# ---------------------------------------------------------------- text tree

def text_tree(root, names=None, *, ascii=False, color=False, max_nodes=MAX_TEXT_NODES) -> str:
    """The graph as an indented tree, the output at the top, inputs below it.

    A node reached a second time (a Value used twice) is shown once in full and
    afterwards as ``#n (see above)`` (in the learner's language)."""
    g = Graph(root, names)
    tee, last, bar, gap = ("|-- ", "`-- ", "|   ", "    ") if ascii else ("├── ", "└── ", "│   ", "    ")
    bold = (lambda s: f"\033[1m{s}\033[0m") if color else (lambda s: s)
    cyan = (lambda s: f"\033[36m{s}\033[0m") if color else (lambda s: s)
    lines: list[str] = []
    shown: set[int] = set()
    cut = 0
    # explicit stack of (node, prefix for this line, prefix for its children)
    stack = [(root, "", "")]
    while stack:
        node, lead, follow = stack.pop()
        number = g.index[id(node)] + 1
        if id(node) in shown:
            lines.append(lead + t("graph.seen", number=number))
            continue
        if len(shown) >= max_nodes:
            cut += 1
            continue
        shown.add(id(node))
        op = g.op(node)
        head = f"#{number} " + (f"[{cyan(op)}] " if op else "")
        name = g.name(node)
        body = (bold(name) + "  " if name else "") + g.label(node).removeprefix(name).strip()
        lines.append(f"{lead}{head}{body}")
        kids = g.children[id(node)]
        for i, kid in reversed(list(enumerate(kids))):
            is_last = i == len(kids) - 1
            stack.append((kid, follow + (last if is_last else tee), follow + (gap if is_last else bar)))
    if cut:
        lines.append(f"... and {len(g.nodes) - len(shown)} more nodes (a picture shows them all: install Graphviz)")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- Graphviz

def _dot_text(s: str) -> str:
    """Escape for a DOT record label."""
    out = []
    for ch in s:
        if ch in '{}|<>"\\':
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def to_dot(root, names=None, *, title: str | None = None) -> str:
    """Graphviz DOT source: a record box per Value, an oval per operation."""
    g = Graph(root, names)
    lines = [
        "digraph computation {",
        '  rankdir=LR; bgcolor="white"; nodesep=0.25; ranksep=0.45;',
        '  node [fontname="Helvetica", fontsize=11];',
        '  edge [color="#555555", arrowsize=0.7];',
    ]
    if title:
        lines.append(f'  labelloc="t"; fontname="Helvetica"; fontsize=13; label="{_dot_text(title)}";')
    for i, node in enumerate(g.nodes):
        fields = []
        if g.name(node):
            fields.append(_dot_text(g.name(node)))
        fields.append("data " + _fmt(getattr(node, "data", None)))
        fields.append("grad " + _fmt(getattr(node, "grad", None)))
        if node is root:
            fill, pen = "#ffe9a8", 'penwidth=2'
        elif not _prev(node):
            fill, pen = "#dcecff", 'penwidth=1'
        else:
            fill, pen = "#f4f4f4", 'penwidth=1'
        lines.append(f'  v{i} [shape=record, style="rounded,filled", fillcolor="{fill}", {pen}, '
                     f'label="{{ {" | ".join(fields)} }}"];')
        op = g.op(node)
        if op:
            lines.append(f'  v{i}op [shape=ellipse, style=filled, fillcolor="#e6f5e6", '
                         f'label="{_dot_text(op)}", fontsize=12];')
            lines.append(f"  v{i}op -> v{i};")
        for kid in g.children[id(node)]:
            lines.append(f"  v{g.index[id(kid)]} -> v{i}{'op' if op else ''};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(root, out, names=None, *, title: str | None = None, dot: str | None = None,
           max_nodes: int = MAX_PICTURE_NODES) -> Path:
    """Write the graph to ``out``: .svg/.png/.pdf through Graphviz, .dot source, .txt tree.

    Raises FileNotFoundError (with how to install it) when a picture is asked
    for and Graphviz's ``dot`` is missing, and ValueError for a graph of more
    than ``max_nodes`` Values (draw the loss of one data point instead)."""
    out = Path(out)
    kind = out.suffix.lower().lstrip(".")
    if kind == "txt":
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text_tree(root, names), encoding="utf-8")
        return out
    if kind not in GRAPHVIZ_FORMATS + ("dot", "gv"):
        raise ValueError(t("graph.bad_suffix", name=repr(out.name)))
    size = len(Graph(root).nodes)
    if size > max_nodes:
        raise ValueError(t("graph.too_big", size=size))
    out.parent.mkdir(parents=True, exist_ok=True)
    source = to_dot(root, names, title=title)
    if kind in ("dot", "gv"):
        out.write_text(source, encoding="utf-8")
        return out
    dot = dot or find_dot()
    if not dot:
        raise FileNotFoundError(t("graph.install_graphviz"))
    done = subprocess.run([dot, f"-T{kind}", "-o", str(out)], input=source.encode(),
                          capture_output=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed: {done.stderr.decode(errors='replace').strip()}")
    return out


def draw(root, out=None, names=None, *, title: str | None = None, quiet: bool = False):
    """Draw the graph behind ``root``; return the file written, or the text tree.

    ``out`` None: ``.kata/graph.svg`` in the working folder if Graphviz is
    installed, otherwise the text tree is printed (and returned). ``names``
    maps a label to a Value, e.g. ``{"w": w, "loss": loss}``."""
    if out is None:
        if not find_dot():
            tree = text_tree(root, names, ascii=not can_print_box())
            if not quiet:
                print(tree, end="")
                print(t("graph.install_graphviz"), file=sys.stderr)
            return tree
        out = Path(".kata") / "graph.svg"
    path = render(root, out, names, title=title)
    if not quiet:
        print(f"wrote {path}")
    return path


def can_print_box() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "├└│".encode(encoding)
        return True
    except (UnicodeEncodeError, LookupError):
        return False
