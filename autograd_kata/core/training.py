"""One gradient-descent step on the mean squared error, as the reference ``train()``
takes it: shared by ``kata check``'s numbers from the learner's engine
(``learner/feel.py``) and ``kata train``'s picture (``pictures/train.py``)."""
from __future__ import annotations


def step(engine, model, xs, ys, lr: float, zero_grad: bool = True) -> float:
    """One step, with or without ``model.zero_grad()``; the loss before the update."""
    errors = [(model(x) - y) ** 2 for x, y in zip(xs, ys, strict=True)]
    loss = sum(errors, engine.Value(0.0)) / len(errors)
    if zero_grad:
        model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= lr * p.grad
    return float(loss.data)
