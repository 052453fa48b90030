"""The slope explorer: one self-contained HTML page (no network, no libraries).

Drag a point along tanh (or sigmoid, exp, relu) and read its tangent's slope,
the local derivative, computed from the output alone - ``1 - t*t`` for tanh.
``kata explore`` writes the page and opens it in your browser.
"""
from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

FUNCTIONS = ("tanh", "sigmoid", "exp", "relu")
_CONFIG = "/*KATA_CONFIG*/{}/*END_KATA_CONFIG*/"


def page(fn: str = "tanh", x: float = 0.5) -> str:
    """The explorer's HTML, starting on function ``fn`` at input ``x``."""
    if fn not in FUNCTIONS:
        raise ValueError(f"no function {fn!r}; choose one of {', '.join(FUNCTIONS)}")
    if not math.isfinite(x):
        raise ValueError(f"x must be a finite number, not {x!r}")
    template = resources.files("autograd_kata.pictures").joinpath("explore.html").read_text(encoding="utf-8")
    if _CONFIG not in template:
        raise RuntimeError("autograd_kata/pictures/explore.html lost its KATA_CONFIG marker")
    config = json.dumps({"fn": fn, "x": round(float(x), 2)})
    return template.replace(_CONFIG, f"/*KATA_CONFIG*/{config}/*END_KATA_CONFIG*/")


def write(out, fn: str = "tanh", x: float = 0.5) -> Path:
    """Write the page to ``out`` and return its path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page(fn, x), encoding="utf-8")
    return out
