"""`kata graph`, `kata explore`, `kata train`: pictures of the graph, the slope
and the learning. All three are optional extras; the stage tests never need them.
Each is a plain function of the parsed values (``autograd_kata.cli`` holds their
arguments and help ids); one that cannot go on raises ``Refusal``.

Only the standard library and autograd_kata.core.manifest are imported here, so the CLI
starts fast; Graphviz, matplotlib and the browser are reached inside handlers.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import time
from pathlib import Path

from autograd_kata.core import manifest, operations
from autograd_kata.core.errors import Refusal
from autograd_kata.core.i18n import t
from autograd_kata.core.term import say, use_colour

PICTURES_EXTRA = "pip install -e '.[pictures]'"

# ------------------------------------------------------------------ helpers


def _kata_root() -> Path:
    root = manifest.find_root()
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return root


class Unwritten(Exception):
    """The learner's stub raised NotImplementedError("stage N: write ...")."""


def _load(impl: str, stage):
    """Import ``impl.stageNN_x`` by package name from the kata root."""
    _kata_root()
    name = f"{impl}.{stage.module}"
    try:
        return importlib.import_module(name)
    except Exception as error:
        sys.modules.pop(name, None)
        line = error.lineno if isinstance(error, SyntaxError) and error.lineno else None
        raise ImportError(t("pictures.no_import_line" if line else "pictures.no_import",
                            file=f"{impl}/{stage.module}.py", line=line,
                            error=f"{type(error).__name__}: {error}")) from None


def _is_stub(error: BaseException) -> bool:
    return isinstance(error, NotImplementedError) and str(error).startswith("stage ")


def _default_out(name: str) -> Path:
    return _kata_root() / ".kata" / name


def _open_in_browser(path: Path) -> None:
    import webbrowser
    url = path.resolve().as_uri()
    try:
        opened = webbrowser.open(url)
    except Exception:  # no browser at all, a broken BROWSER variable, ...
        opened = False
    if not opened:
        say(t("train.open", url=url), file=sys.stderr)


# ------------------------------------------------------------------ graph

DEFAULT_INPUTS = {"a": 2.0, "b": -3.0, "c": 6.5}
METHODS = operations.methods()  # the Value methods an expression may call: the operations table's
_BINOPS = {ast.Add: "__add__", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def allowed_methods() -> dict[str, str]:
    """The methods an expression may call, as the help and the refusal list them."""
    return {"methods": " ".join(f".{m}()" for m in METHODS),
            "calls": t("ops.list_sep").join(f"{m}(x)" for m in METHODS)}


class BadExpression(ValueError):
    pass


def evaluate(expr: str, Value, inputs: dict[str, float]):
    """Evaluate ``expr`` with ``Value`` leaves for the names in it - safely:
    the expression is parsed, and only arithmetic and the methods of the operations table
    (``METHODS``) are
    allowed (no calls, attributes or names beyond those). Returns the root and
    ``{name: leaf}``; a name used twice is one leaf, so reuse shows in the graph."""
    if len(expr) > 500:
        raise BadExpression(t("graph.expr.too_long", limit=500))
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as error:
        raise BadExpression(t("graph.expr.syntax", expr=repr(expr), python=error.msg)) from None
    leaves: dict[str, object] = {}

    def number(node):
        return isinstance(node, ast.Constant) and type(node.value) in (int, float)

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if number(node):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in inputs:
                raise BadExpression(t("graph.expr.unset", name=node.id))
            if node.id not in leaves:
                leaves[node.id] = Value(float(inputs[node.id]))
            return leaves[node.id]
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = node.operand
            if isinstance(operand, ast.Constant) and isinstance(operand.value, (int, float)) \
                    and number(operand):  # -3 is a number, not a negation node
                return -operand.value if isinstance(node.op, ast.USub) else operand.value
            inner = ev(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            left, right = ev(node.left), ev(node.right)
            op = type(node.op)
            if op is ast.Add:
                return left + right
            if op is ast.Sub:
                return left - right
            if op is ast.Mult:
                return left * right
            if op is ast.Div:
                return left / right
            return left ** right
        if isinstance(node, ast.Call) and not node.keywords:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in METHODS and not node.args:
                return getattr(ev(func.value), func.attr)()
            if isinstance(func, ast.Name) and func.id in METHODS and len(node.args) == 1:
                return getattr(ev(node.args[0]), func.id)()
        raise BadExpression(t("graph.expr.not_allowed", code=repr(ast.unparse(node)), **allowed_methods()))

    root = ev(tree)
    if not all(hasattr(root, attr) for attr in ("data", "_prev")):
        raise BadExpression(t("graph.expr.number", expr=repr(expr)))
    return root, leaves


def _parse_sets(pairs) -> dict[str, float]:
    values = dict(DEFAULT_INPUTS)
    for pair in pairs or ():
        name, sep, number = pair.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier() or name in METHODS:
            raise BadExpression(t("graph.set.shape", pair=repr(pair)))
        try:
            values[name] = float(number)
        except ValueError:
            raise BadExpression(t("graph.set.number", pair=repr(pair), number=repr(number.strip()))) from None
    return values


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


def graph_command(expr: str | None = None, sets=(), stage=manifest.STAGES[-1].number, impl: str = "exercises",
                  out: str | None = None, no_backward: bool = False, open_it: bool = False) -> int:
    from autograd_kata.pictures import graph

    stage = manifest.stage(stage)
    if out is not None and Path(out).suffix.lower().lstrip(".") not in ("txt", "dot", "gv", *graph.GRAPHVIZ_FORMATS):
        raise Refusal(t("graph.bad_suffix", name=repr(Path(out).name)), code=2, where="graph")  # before any work
    try:
        inputs = _parse_sets(sets)
    except BadExpression as error:
        raise Refusal(str(error), code=2, where="graph") from None
    try:
        engine = _load(impl, stage)
    except ImportError as error:
        raise Refusal(str(error), where="graph") from None
    Value = getattr(engine, "Value", None)
    if Value is None:
        raise Refusal(t("graph.no_value", file=f"{impl}/{stage.module}.py"), where=None)

    where = f"{impl}/{stage.module}.py"
    try:
        if expr:
            root, names = evaluate(expr, Value, inputs)
            names = names if any(v is root for v in names.values()) else {**names, "out": root}
            title = expr
        else:
            root, names, title = _example(Value, stage.number)
    except BadExpression as error:
        raise Refusal(str(error), code=2, where="graph") from None
    except Exception as error:
        raise _engine_failed(error, where, impl, t("train.doing.graph")) from None

    when = t("graph.before")
    if not no_backward:
        if hasattr(root, "backward"):
            try:
                root.backward()
                when = t("graph.after")
            except Exception as error:
                if not _is_stub(error):
                    raise _engine_failed(error, where, impl, "backward()") from None
                say(t("graph.backward_unwritten", error=stub_said(error)), file=sys.stderr)
        else:
            say(t("graph.no_backward", n=stage.number), file=sys.stderr)
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
    target = path or _default_out("graph.svg")
    try:
        graph.render(root, target, names, title=title)
    except (ValueError, RuntimeError) as error:
        raise Refusal(str(error), code=2 if isinstance(error, ValueError) else 1, where="graph") from None
    print(t("train.wrote", path=target))
    if open_it:
        _open_in_browser(target)
    return 0


def stub_said(error) -> str:
    from autograd_kata.core.explain import stub_said as said  # here, not at the top: `kata --help` stays fast
    return said(error)


def _engine_failed(error, where, impl, doing) -> Refusal:
    """The refusal (exit 1) for the learner's engine failing, to raise."""
    if _is_stub(error):
        if impl == "exercises" and (manifest.find_root() / "solutions").is_dir():
            lines = [t("train.not_written", error=stub_said(error)), t("train.not_written_reference")]
        else:  # a student copy has no reference to fall back on: one line, what to do
            lines = [t("train.not_written_student", error=stub_said(error))]
    else:
        lines = [t("train.raised", where=where, kind=type(error).__name__, doing=doing, error=error)]
        if isinstance(error, AttributeError) or "unsupported operand" in str(error):
            lines.append(t("train.later_stage"))
    return Refusal("\n".join(lines), where=None)


# ------------------------------------------------------------------ explore

def explore_command(out: str | None = None, fn: str = "tanh", x: float = 0.5, no_open: bool = False) -> int:
    from autograd_kata.pictures import explore

    target = Path(out) if out else _default_out("explore.html")
    try:
        path = explore.write(target, fn=fn, x=x)
    except ValueError as error:
        raise Refusal(str(error), code=2, where="explore") from None
    print(t("train.wrote", path=path))
    if not no_open:
        _open_in_browser(path)
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
    stage = manifest.STAGES[-1]
    xs, ys = trainer.two_moons(points, noise=noise, seed=seed)
    started = time.perf_counter()
    while True:
        where = f"{impl}/{stage.module}.py"
        try:
            engine = _load(impl, stage)
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
            if _is_stub(error) and impl == "exercises" and not (manifest.find_root() / "solutions").is_dir():
                raise Refusal(t("train.unwritten_no_reference", n=stage.number, error=stub_said(error)),
                              where=None) from None
            if _is_stub(error) and impl == "exercises":
                say("\n" + t("train.unwritten", n=stage.number, error=stub_said(error)), file=sys.stderr)
                say(t("train.using_reference"), file=sys.stderr)
                impl = "solutions"
                continue
            raise _engine_failed(error, where, impl, t("train.doing.train")) from None
    train_seconds = time.perf_counter() - started
    acc = trainer.accuracy(model, xs, ys)
    target = Path(out) if out else _default_out("train.png")
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
