"""One gradient-descent step on the mean squared error, as the reference ``train()``
takes it: shared by ``kata check``'s numbers from the learner's engine
(``learner/feel.py``) and ``kata train``'s picture (``pictures/train.py``).

Its two halves are here too, for a demonstration that stops between them
(feel's second ``backward()`` after a step): :func:`mse` builds the loss's
graph, :func:`update` moves the parameters."""
from __future__ import annotations


def mse(engine, model, xs, ys):
    """The mean squared error of ``model`` on the points: a Value, with its graph."""
    errors = [(model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)]
    return sum(errors, engine.Value(0.0)) / len(errors)


def update(model, lr: float) -> None:
    """Nudge every parameter against its gradient."""
    for p in model.parameters():
        p.data -= lr * p.grad


def step(engine, model, xs, ys, lr: float, zero_grad: bool = True) -> float:
    """One step, with or without ``model.zero_grad()``; the loss before the update."""
    loss = mse(engine, model, xs, ys)
    if zero_grad:
        model.zero_grad()
    loss.backward()
    update(model, lr)
    return float(loss.data)
