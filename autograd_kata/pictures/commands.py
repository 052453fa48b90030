"""`kata graph`, `kata explore`, `kata train`: pictures of the graph, the slope
and the learning. All three are optional extras; the stage tests never need them.
Each is a plain function of the parsed values (``autograd_kata.cli`` holds their
arguments and help ids); one that cannot go on raises ``Refusal``.

The handlers are here; the expression evaluator is ``expression.py``, loading the
learner's engine and explaining its failures ``engine.py``.  Only the standard library
and core are imported by these three, so the CLI starts fast; Graphviz, matplotlib
and the browser are reached inside handlers.
"""
from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

from autograd_kata.core import manifest
from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t
from autograd_kata.core.term import say, use_colour
from autograd_kata.pictures.engine import (
    PICTURES_EXTRA,
    default_out,
    engine_failed,
    is_stub,
    load,
    open_in_browser,
    stub_said,
)
from autograd_kata.pictures.expression import DEFAULT_INPUTS, BadExpression, allowed_methods, evaluate, parse_sets

# ------------------------------------------------------------------ graph

def _example(Value, number: int):
    """The default picture, as far as this stage's Value can go: the article's
    L = tanh(a*b + c) from stage 4 on, a*b + c in stages 2-3, and in stage 1
    (no operators yet) the same first step wired by hand."""
    a, b, c = (Value(v) for v in DEFAULT_INPUTS.values())
    names = {"a": a, "b": b, "c": c}
    if number == 1 or not hasattr(Value, "__mul__"):
        d = Value(a.data * b.data, (a, b), "*")
        names["d"] = d
        return d, names, "d = a*b, wired by hand (stage 1 has no operators yet)"
    d = a * b
    e = d + c
    names.update(d=d, e=e)
    if not hasattr(Value, "tanh"):
        return e, names, "e = a*b + c"
    L = e.tanh()
    names["L"] = L
    return L, names, "L = tanh(a*b + c)"


def graph_command(expr: str | None = None, sets=(), stage: int | str | None = None, impl: str = "exercises",
                  out: str | None = None, no_backward: bool = False, open_it: bool = False) -> int:
    from autograd_kata.pictures import graph

    drawn = manifest.role("mlp") if stage is None else manifest.stage(stage)
    if out is not None and Path(out).suffix.lower().lstrip(".") not in ("txt", "dot", "gv", *graph.GRAPHVIZ_FORMATS):
        raise Refusal(t("graph.bad_suffix", name=repr(Path(out).name)), code=2, where="graph")  # before any work
    try:
        inputs = parse_sets(sets)
    except BadExpression as error:
        raise Refusal(str(error), code=2, where="graph") from None
    try:
        engine = load(impl, drawn)
    except ImportError as error:
        raise Refusal(str(error), where="graph") from None
    Value = getattr(engine, "Value", None)
    if Value is None:
        raise Refusal(t("graph.no_value", file=f"{impl}/{drawn.module}.py"), where=None)

    where = f"{impl}/{drawn.module}.py"
    try:
        if expr:
            root, names = evaluate(expr, Value, inputs)
            names = names if any(v is root for v in names.values()) else {**names, "out": root}
            title = expr
        else:
            root, names, title = _example(Value, drawn.number)
    except BadExpression as error:
        raise Refusal(str(error), code=2, where="graph") from None
    except Exception as error:
        raise engine_failed(error, where, impl, t("train.doing.graph")) from None

    when = t("graph.before")
    if not no_backward:
        if hasattr(root, "backward"):
            try:
                root.backward()
                when = t("graph.after")
            except Exception as error:
                if not is_stub(error):
                    raise engine_failed(error, where, impl, "backward()") from None
                say(t("graph.backward_unwritten", error=stub_said(error)), file=sys.stderr)
        else:
            say(t("graph.no_backward", n=drawn.number), file=sys.stderr)
    title = f"{title}   ({where}, {when})"

    color = use_colour(sys.stdout)
    ascii_only = not graph.can_print_box()
    path = Path(out) if out else None
    if path is not None and path.suffix.lower() == ".txt":
        graph.render(root, path, names)
        print(t("train.wrote", path=path))
        return 0
    print(f"{title}")
    print(graph.text_tree(root, names, ascii=ascii_only, color=color), end="")
    wants_picture = path is None or path.suffix.lower().lstrip(".") in graph.GRAPHVIZ_FORMATS
    if wants_picture and not graph.find_dot():
        say(t("graph.install_graphviz"), file=sys.stderr)
        return 0
    target = path or default_out("graph.svg")
    try:
        graph.render(root, target, names, title=title)
    except (ValueError, RuntimeError) as error:
        raise Refusal(str(error), code=2 if isinstance(error, ValueError) else 1, where="graph") from None
    print(t("train.wrote", path=target))
    if open_it:
        open_in_browser(target)
    return 0


# ------------------------------------------------------------------ explore

def explore_command(out: str | None = None, fn: str = "tanh", x: float = 0.5, no_open: bool = False) -> int:
    from autograd_kata.pictures import explore

    target = Path(out) if out else default_out("explore.html")
    try:
        path = explore.write(target, fn=fn, x=x)
    except ValueError as error:
        raise Refusal(str(error), code=2, where="explore") from None
    print(t("train.wrote", path=path))
    if not no_open:
        open_in_browser(path)
    return 0


# ------------------------------------------------------------------ train

def train_command(impl: str = "exercises", out: str | None = None, steps: int = 200, points: int = 80,
                  batch: int = 16, lr: float = 0.2, noise: float = 0.1, seed: int = 0,
                  no_zero_grad: bool = False) -> int:
    if importlib.util.find_spec("matplotlib") is None:
        raise Refusal(t("train.no_matplotlib", extra=PICTURES_EXTRA), where=None)
    from autograd_kata.pictures import train as trainer

    if steps < 1 or points < 4 or batch < 1:
        raise Refusal(t("train.bad_sizes"), code=2, where=None)
    stage = manifest.role("mlp")
    xs, ys = trainer.two_moons(points, noise=noise, seed=seed)
    started = time.perf_counter()
    while True:
        where = f"{impl}/{stage.module}.py"
        try:
            engine = load(impl, stage)
            # a one-point step on a throwaway model: an unwritten stub shows up now
            probe = engine.MLP(2, [1], seed=seed)
            engine.train(probe, xs[:1], ys[:1], steps=1, lr=0.0)
            say(t("train.training", where=where, hidden=", ".join(map(str, trainer.HIDDEN)), points=len(xs),
                  steps=steps, batch=min(batch, len(xs))), file=sys.stderr)
            both = {"zero_grad": True} if no_zero_grad else {}
            model, losses, start = trainer.fit(engine, xs, ys, steps=steps, lr=lr, batch=batch,
                                        seed=seed, progress=trainer.Progress(steps), **both)
            without = None
            if no_zero_grad:  # the same loop and seed, minus model.zero_grad()
                say(t("train.again_without"), file=sys.stderr)
                unzeroed, without, _ = trainer.fit(engine, xs, ys, steps=steps, lr=lr,
                                                   batch=batch, seed=seed,
                                                   progress=trainer.Progress(steps), zero_grad=False)
            break
        except ImportError as error:
            raise Refusal(str(error), where="train") from None
        except Exception as error:
            if is_stub(error) and impl == "exercises" and not (manifest.find_root() / "solutions").is_dir():
                raise Refusal(t("train.unwritten_no_reference", n=stage.number, error=stub_said(error)),
                              where=None) from None
            if is_stub(error) and impl == "exercises":
                say("\n" + t("train.unwritten", n=stage.number, error=stub_said(error)), file=sys.stderr)
                say(t("train.using_reference"), file=sys.stderr)
                impl = "solutions"
                continue
            raise engine_failed(error, where, impl, t("train.doing.train")) from None
    train_seconds = time.perf_counter() - started
    acc = trainer.accuracy(model, xs, ys)
    target = Path(out) if out else default_out("train.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    trainer.plot(model, xs, ys, losses, target, acc=acc, without=without,
                 title=trainer.words("train.plot.title", where=where, steps=steps, seed=seed))
    print(t("train.result", points=len(xs), start=f"{start:.4f}", end=f"{trainer.mse(model, xs, ys):.4f}",
            acc=f"{acc:.0%}", seconds=f"{train_seconds:.1f}"))
    if without is not None:
        print(t("train.result_without", start=f"{start:.4f}", end=_safe_mse(trainer, unzeroed, xs, ys),
                acc=f"{trainer.accuracy(unzeroed, xs, ys):.0%}"))
    print(t("train.wrote", path=target))
    from autograd_kata.core.i18n import current_language
    if trainer.picture_language() != current_language():  # no font draws the learner's language
        fonts = trainer.FONTS.get(current_language(), ())[:2]
        print(t("train.picture_in_english", fonts=t("check.kinds_sep").join(f"`{font}`" for font in fonts)))
    return 0


def _safe_mse(trainer, model, xs, ys) -> str:
    try:
        value = trainer.mse(model, xs, ys)
    except OverflowError:
        return t("train.overflow")
    return f"{value:.4f}"


# ------------------------------------------------------------------ help

def help_fields() -> dict[str, str]:
    """The computed parts of graph's and train's help (cli.COMMANDS): example code and
    commands stay code, only their notes come from the catalogue."""
    return {
        "inputs": ", ".join(f"{k}={v}" for k, v in DEFAULT_INPUTS.items()),
        **allowed_methods(),
        "code": "    from autograd_kata.pictures.graph import draw\n"
                f"    draw(loss)            # {t('help.graph.comment')} draw(loss, 'loss.png', names={{'w': w}})",
        "examples": "\n".join((
            "  kata graph",
            f"  kata graph --expr 'a*a + a' --set a=3        {t('help.graph.reused')}",
            "  kata graph --expr '(x*w + 1).relu()' --set x=0.5 --set w=-2 --out relu.png",
            "  kata graph --stage 2 --impl solutions --no-backward --out graph.txt")),
        "extra": PICTURES_EXTRA,
    }
