"""``kata graph --expr``: an expression evaluated safely with the learner's ``Value``
leaves (parsed, never run by Python: arithmetic and the operations table's methods only), and the
``--set NAME=NUMBER`` inputs it reads."""
from __future__ import annotations

import ast

from autograd_kata.core import operations
from autograd_kata.core.i18n import t

DEFAULT_INPUTS = {"a": 2.0, "b": -3.0, "c": 6.5}
METHODS = operations.methods()  # the Value methods an expression may call: the operations table's


def allowed_methods() -> dict[str, str]:
    """The methods an expression may call, as the help and the refusal list them."""
    return {"methods": " ".join(f".{m}()" for m in METHODS),
            "calls": t("ops.list_sep").join(f"{m}(x)" for m in METHODS)}


_BINOPS = {ast.Add: "__add__", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


class BadExpression(ValueError):
    pass


def evaluate(expr: str, Value, inputs: dict[str, float]):
    """Evaluate ``expr`` with ``Value`` leaves for the names in it - safely:
    the expression is parsed, and only arithmetic and the three methods are
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


def parse_sets(pairs) -> dict[str, float]:
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
