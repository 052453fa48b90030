"""The slope explorer: one self-contained HTML page (no network, no libraries).

Drag a point along tanh (or sigmoid, exp, relu) and read its tangent's slope,
the local derivative, computed from the output alone - ``1 - t*t`` for tanh.
``kata explore`` writes the page and opens it in your browser.

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

FUNCTIONS = ("tanh", "sigmoid", "exp", "relu")
_CONFIG = "/*KATA_CONFIG*/{}/*END_KATA_CONFIG*/"
_TEXT = "/*KATA_TEXT*/{}/*END_KATA_TEXT*/"
_MARKER = re.compile(r"\{\{([a-z][a-z0-9_.]*)\}\}")
# Messages the script shows (switching function, moving the point).
SCRIPT_TEXT = ("explore.explain.tanh", "explore.explain.sigmoid", "explore.explain.exp",
               "explore.explain.relu", "explore.exp_formula", "explore.axis_x", "explore.slope",
               "explore.valuetext", "explore.finite_difference")
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
    for marker in (_CONFIG, _TEXT):
        if marker not in template:
            raise RuntimeError(f"autograd_kata/pictures/explore.html lost its {marker} marker")
    config = json.dumps({"fn": fn, "x": round(float(x), 2)})
    text = json.dumps({msgid: raw(msgid, lang) for msgid in SCRIPT_TEXT}, ensure_ascii=False)
    text = text.replace("</", "<\\/")  # no message may close the <script>
    words = {"lang": html.escape(lang)}
    filled = _MARKER.sub(lambda m: words.get(m.group(1)) or _html(m.group(1), lang), template)
    return (filled.replace(_CONFIG, f"/*KATA_CONFIG*/{config}/*END_KATA_CONFIG*/")
                  .replace(_TEXT, f"/*KATA_TEXT*/{text}/*END_KATA_TEXT*/"))


def write(out, fn: str = "tanh", x: float = 0.5, lang: str | None = None) -> Path:
    """Write the page to ``out`` and return its path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page(fn, x, lang), encoding="utf-8")
    return out
