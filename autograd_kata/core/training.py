"""One gradient-descent step on the mean squared error, with the learner's own
``Value`` and model: shared by ``kata check``'s numbers from the learner's engine
(``learner/feel_engine.py``) and ``kata train``'s picture (``pictures/train.py``).

This module ships in every copy and in the wheel, so it is deliberately *not*
stage 8's ``train`` (the leak scan checks that no solution line is here): the
loss is built one point at a time and the step goes through a helper per part.
The numbers are the same a right ``train()`` gets, operation for operation.

Its two halves are here too, for a demonstration that stops between them
(feel's second ``backward()`` after a step): :func:`mse` builds the loss's
graph, :func:`update` moves the parameters."""
from __future__ import annotations


def mse(engine, model, xs, ys):
    """The mean squared error of ``model`` on the points: a Value, with its graph."""
    points = list(zip(xs, ys, strict=True))  # one target per input, or a ValueError
    total = engine.Value(0.0)
    for point, target in points:
        miss = model(point) - target
        total = total + miss ** 2
    return total / len(points)


def update(model, lr: float) -> None:
    """Move every parameter a step of ``lr`` against its gradient."""
    for param in model.parameters():
        change = lr * param.grad
        param.data -= change


def step(engine, model, xs, ys, lr: float, zero_grad: bool = True) -> float:
    """One step, with or without ``model.zero_grad()``; the loss before the update."""
    loss = mse(engine, model, xs, ys)
    if zero_grad:
        model.zero_grad()
    loss.backward()
    update(model, lr)
    return float(loss.data)
