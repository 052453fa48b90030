"""Watch a network learn: the stage-8 MLP on two moons, drawn as a PNG.

Everything runs on the engine's own Values - the stage module's ``MLP`` and
``train()`` - one small random batch per step; numpy and matplotlib only draw
the result. ``kata train`` calls :func:`fit` and then :func:`plot`.

The picture's words (titles, legend) are in the learner's language when
matplotlib has a font that can draw it, else in English: a picture of empty
boxes teaches nothing.  The terminal lines follow the language as always.
"""
from __future__ import annotations

import math
import random
import sys
import time

from autograd_kata.core.training import step

HIDDEN = (8, 8)

# Fonts that draw Japanese, as matplotlib names them (Linux, macOS, Windows).
FONTS = {"ja": ("Noto Sans CJK JP", "Noto Sans JP", "IPAexGothic", "IPAGothic", "TakaoGothic", "VL Gothic",
                "Hiragino Sans", "Hiragino Kaku Gothic ProN", "Yu Gothic", "Meiryo", "MS Gothic")}


def picture_font(lang: str) -> str | None:
    """The name of an installed font that draws ``lang`` (None: none found, or matplotlib's default does)."""
    wanted = FONTS.get(lang)
    if not wanted:
        return None
    try:
        from matplotlib import font_manager
    except ImportError:
        return None
    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in wanted if name in installed), None)


def picture_language() -> str:
    """The learner's language if the picture can be drawn in it, else English."""
    from autograd_kata.core.i18n import DEFAULT, current_language
    lang = current_language()
    return lang if lang not in FONTS or picture_font(lang) else DEFAULT


def words(msgid: str, **fields) -> str:
    """A text of the picture (``train.plot.*``) in :func:`picture_language`."""
    from autograd_kata.core.i18n import t_in
    return t_in(picture_language(), msgid, **fields)


def two_moons(n: int = 80, noise: float = 0.1, seed: int = 0):
    """Two interleaved half circles, ``n`` points, labels +1 (upper) and -1 (lower).

    Made here, from a seeded ``random.Random``: the same seed, the same points."""
    rng = random.Random(seed)
    xs, ys = [], []
    for i in range(n):
        t = math.pi * rng.random()
        if i % 2 == 0:
            x, y, label = math.cos(t), math.sin(t), 1.0
        else:
            x, y, label = 1.0 - math.cos(t), 0.5 - math.sin(t), -1.0
        xs.append([x + rng.gauss(0.0, noise), y + rng.gauss(0.0, noise)])
        ys.append(label)
    return xs, ys


class Progress:
    """A plain-text progress bar on stderr: redrawn in place on a terminal,
    a few whole lines otherwise (so CI logs stay short)."""

    def __init__(self, total: int, stream=None, width: int = 30):
        self.total, self.width = total, width
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self._last_quarter = -1

    def update(self, done: int, loss: float) -> None:
        filled = int(self.width * done / self.total)
        from autograd_kata.core.i18n import t
        line = t("train.progress", bar="#" * filled + "." * (self.width - filled), done=done, total=self.total,
                 loss=f"{loss:.4f}", seconds=f"{time.perf_counter() - self.start:.1f}")
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done == self.total else ""))
            self.stream.flush()
        else:
            quarter = 4 * done // self.total
            if quarter != self._last_quarter:
                self._last_quarter = quarter
                self.stream.write(line + "\n")
                self.stream.flush()


def score(model, point) -> float:
    """The model's output for one point, as a float (a forward pass only).

    A graph that is never backward()-ed is a knot of reference cycles (each
    node's _backward closure holds the node), which only Python's slow cycle
    collector frees; cutting the closures lets the memory go at once."""
    out = model(point)
    value = float(out.data)
    stack, seen = [out], set()
    while stack:
        node = stack.pop()
        if id(node) in seen or not getattr(node, "_prev", None):
            continue  # leaves (the weights among them) keep everything
        seen.add(id(node))
        try:
            node._backward = None
        except AttributeError:
            pass
        stack.extend(node._prev)
    return value


def accuracy(model, xs, ys) -> float:
    """The share of points on the right side of the boundary (sign of the output)."""
    right = sum((score(model, x) > 0) == (y > 0) for x, y in zip(xs, ys, strict=True))
    return right / len(xs)


def mse(model, xs, ys) -> float:
    """The mean squared error over all the points (forward passes only)."""
    return sum((score(model, x) - y) ** 2 for x, y in zip(xs, ys, strict=True)) / len(xs)


def fit(engine, xs, ys, *, steps: int = 200, lr: float = 0.2, batch: int = 16,
        seed: int = 0, hidden=HIDDEN, progress: Progress | None = None, zero_grad: bool | None = None):
    """Train ``engine.MLP(2, [*hidden, 1], seed=seed)`` with the module's own
    ``train()`` (mean squared error against labels +-1), one step per call on a
    random batch, the learning rate falling linearly to a tenth. Returns the
    model, every step's batch loss, and the loss over all points before training.

    With ``zero_grad`` True or False, every step is :func:`step` instead, with or
    without ``zero_grad()``: the same loop both ways, so two runs differ in that
    call only (``kata train --no-zero-grad``)."""
    model = engine.MLP(2, [*hidden, 1], seed=seed)
    start = mse(model, xs, ys)
    rng = random.Random(seed + 1)
    batch = min(batch, len(xs))
    losses: list[float] = []
    for k in range(steps):
        picked = rng.sample(range(len(xs)), batch)
        step_lr = lr * (1.0 - 0.9 * k / steps)
        bx, by = [xs[i] for i in picked], [ys[i] for i in picked]
        if zero_grad is None:
            losses.append(float(engine.train(model, bx, by, steps=1, lr=step_lr)[-1]))
        else:
            losses.append(step(engine, model, bx, by, step_lr, zero_grad))
        if progress:
            progress.update(k + 1, losses[-1])
    return model, losses, start


def plot(model, xs, ys, losses, out, *, title: str = "", grid: int = 36, acc: float | None = None,
         without=None):
    """Two panels: the loss per step, and the decision boundary over the data.
    ``without``: the losses of the same training without zero_grad(), drawn beside."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    font = picture_font(picture_language())
    if font:
        plt.rcParams["font.family"] = [font, "DejaVu Sans"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.6, 4.0), dpi=100)
    steps = np.arange(1, len(losses) + 1)
    left.plot(steps, losses, color="#93b4f5", linewidth=1, label=words("train.plot.batch_loss"))
    window = max(1, len(losses) // 20)
    if len(losses) >= window:
        smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
        left.plot(steps[window - 1:], smooth, color="#1d4ed8", linewidth=2,
                  label=words("train.plot.mean_of", window=window))
    if without is not None:
        finite = [x if math.isfinite(x) else float("nan") for x in without]  # a diverged run stops its line
        left.plot(np.arange(1, len(finite) + 1), finite, color="#dc2626", linewidth=1.2,
                  label=words("train.plot.without"))
        left.lines[0].set_label(words("train.plot.batch_loss_with"))
    left.set_yscale("log")
    left.set_xlabel(words("train.plot.step"))
    left.set_ylabel(words("train.plot.mse"))
    left.set_title(words("train.plot.loss"))
    left.grid(alpha=0.3)
    left.legend(loc="upper right", fontsize=8)

    px = np.array(xs)
    x0, x1 = px[:, 0].min() - 0.5, px[:, 0].max() + 0.5
    y0, y1 = px[:, 1].min() - 0.5, px[:, 1].max() + 0.5
    gx, gy = np.meshgrid(np.linspace(x0, x1, grid), np.linspace(y0, y1, grid))
    # the model itself (its Values) scores every grid point; numpy only holds the numbers
    grid_score = np.array([[score(model, [float(a), float(b)]) for a, b in zip(row_x, row_y, strict=True)]
                      for row_x, row_y in zip(gx, gy, strict=True)])
    right.contourf(gx, gy, grid_score, levels=[-1e9, 0, 1e9], colors=["#fde2e2", "#dbe7ff"])
    right.contour(gx, gy, grid_score, levels=[0], colors=["#333333"], linewidths=1.5)
    labels = np.array(ys)
    for sign, colour, marker in ((1.0, "#1d4ed8", "o"), (-1.0, "#dc2626", "s")):
        sel = labels == sign
        right.scatter(px[sel, 0], px[sel, 1], c=colour, marker=marker, s=22, edgecolors="white",
                      linewidths=0.6, label=words("train.plot.label", sign=f"{sign:+.0f}"))
    right.set_xlim(x0, x1)
    right.set_ylim(y0, y1)
    acc = accuracy(model, xs, ys) if acc is None else acc
    right.set_title(words("train.plot.boundary", acc=f"{acc:.0%}"))
    right.legend(loc="lower left", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out
