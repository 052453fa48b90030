"""The slope explorer: one self-contained HTML page (no network, no libraries).

Drag a point along tanh (or exp, relu, sigmoid) and read its tangent's slope,
the local derivative, computed from the output alone - ``1 - t*t`` for tanh.
``kata explore`` writes the page and opens it in your browser.

Its functions are the operations table's rows that say how to draw them
(``Explore`` in ``core/operations.py``), in table order, then sigmoid, which is
no operation of the engine but shows how small a slope from the output can be.

The page's words come from the message catalogue (``explore.*`` ids), in the
language chosen when the page is written: ``{{id}}`` markers in the HTML are
replaced by the escaped text, and the script's own words travel in the
``KATA_TEXT`` object.
"""
from __future__ import annotations

import html
import json
import math
import re
from importlib import resources
from pathlib import Path

from autograd_kata.core.operations import Explore, explored

#: drawn after the table's rows: no operation of the engine, a slope from the output all the same
SIGMOID = Explore("1 / (1 + Math.exp(-x))", "t * (1 - t)",
                  '"s(1 - s) = " + f4(t) + " \\u00d7 " + f4(1 - t) + " = " + f4(s)', "t > 0 && t < 1",
                  (-6, 6), (-0.15, 1.15), (0, 0.3), "explore.explain.sigmoid")
DRAWN: dict[str, Explore] = {**{op.name: op.explore for op in explored() if op.explore}, "sigmoid": SIGMOID}
FUNCTIONS = tuple(DRAWN)
_CONFIG = "/*KATA_CONFIG*/{}/*END_KATA_CONFIG*/"
_FUNCTIONS = "/*KATA_FUNCTIONS*/{}/*END_KATA_FUNCTIONS*/"
_OPTIONS = "<!--KATA_OPTIONS-->"
_TEXT = "/*KATA_TEXT*/{}/*END_KATA_TEXT*/"
_MARKER = re.compile(r"\{\{([a-z][a-z0-9_.]*)\}\}")


def explain_id(name: str) -> str:
    """The catalogue id of function ``name``'s explanation: its own, else the one every function shares."""
    from autograd_kata.core.i18n import MESSAGES
    own = DRAWN[name].explain or f"explore.explain.{name}"
    return own if own in MESSAGES.catalogue("en").messages else "explore.explain.any"


def script_text() -> tuple[str, ...]:
    """Messages the script shows (switching function, moving the point)."""
    return (*dict.fromkeys(explain_id(name) for name in DRAWN), "explore.exp_formula", "explore.axis_x",
            "explore.slope", "explore.valuetext", "explore.finite_difference")


def functions_js() -> str:
    """The script's FNS object: each drawn function's curve, slope from its output, readout and view."""
    entries = []
    for name, e in DRAWN.items():
        entries.append(
            f'{json.dumps(name)}: {{ title: {json.dumps(f"out = {name}(x)")}, '
            f"f: function (x) {{ return {e.curve}; }}, fromOut: function (t) {{ return {e.slope}; }}, "
            f"formula: function (t, s) {{ return {e.readout}; }}, outputs: function (t) {{ return {e.outputs}; }}, "
            f"slopeText: {json.dumps(e.slope)}, explain: {json.dumps(explain_id(name))}, "
            f"xr: {list(e.xr)}, yr: {list(e.yr)}, sr: {list(e.sr)} }}")
    return "{\n    " + ",\n    ".join(entries) + "\n  }"


def options_html() -> str:
    return "\n      ".join(f'<option value="{html.escape(name)}">{html.escape(name)}(x)</option>' for name in DRAWN)
# The markup a message's {fields} stand for (the message itself is escaped first).
_KBD = {k: f"<kbd>{v}</kbd>" for k, v in
        (("left", "&larr;"), ("right", "&rarr;"), ("shift", "Shift"), ("home", "Home"), ("end", "End"))}
_HTML_FIELDS = {
    "explore.lead": {"backward": "<code>_backward</code>", "outgrad": "<code>out.grad</code>",
                     "formula": "<code>1 - t*t</code>", "x": "<code>x</code>"},
    "explore.keys": _KBD,
}


def _html(msgid: str, lang: str) -> str:
    from autograd_kata.core.i18n import raw
    return html.escape(raw(msgid, lang)).format(**_HTML_FIELDS.get(msgid, {}))


def page(fn: str = "tanh", x: float = 0.5, lang: str | None = None) -> str:
    """The explorer's HTML, starting on function ``fn`` at input ``x``, in
    ``lang`` (default: the learner's language)."""
    from autograd_kata.core.i18n import current_language, raw, t
    lang = current_language(lang)
    if fn not in FUNCTIONS:
        raise ValueError(t("explore.no_function", fn=repr(fn), choices=", ".join(FUNCTIONS)))
    if not math.isfinite(x):
        raise ValueError(t("explore.bad_x", x=repr(x)))
    template = resources.files("autograd_kata.pictures").joinpath("explore.html").read_text(encoding="utf-8")
    for marker in (_CONFIG, _TEXT, _FUNCTIONS, _OPTIONS):
        if marker not in template:
            raise RuntimeError(f"autograd_kata/pictures/explore.html lost its {marker} marker")
    config = json.dumps({"fn": fn, "x": round(float(x), 2)})
    text = json.dumps({msgid: raw(msgid, lang) for msgid in script_text()}, ensure_ascii=False)
    text = text.replace("</", "<\\/")  # no message may close the <script>
    words = {"lang": html.escape(lang)}
    filled = _MARKER.sub(lambda m: words.get(m.group(1)) or _html(m.group(1), lang), template)
    return (filled.replace(_CONFIG, f"/*KATA_CONFIG*/{config}/*END_KATA_CONFIG*/")
                  .replace(_TEXT, f"/*KATA_TEXT*/{text}/*END_KATA_TEXT*/")
                  .replace(_FUNCTIONS, functions_js()).replace(_OPTIONS, options_html()))


def write(out, fn: str = "tanh", x: float = 0.5, lang: str | None = None) -> Path:
    """Write the page to ``out`` and return its path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page(fn, x, lang), encoding="utf-8")
    return out
