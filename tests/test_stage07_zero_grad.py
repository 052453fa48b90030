"""Stage 7: gradients live across backward() calls; a used graph refuses a second pass.

Leaf gradients add up from one backward() to the next (that is why training
calls zero_grad() every step). backward() releases the graph it walked, so a
second pass raises unless the first asked for retain_graph=True; a retained
second pass adds exactly one more copy to each leaf, as PyTorch does."""
from expect import Expect, in_engine

expect = Expect(stage=7)

EVERY = "zero_grad() must reset every parameter"
REFUSE = "a second backward() must raise and name retain_graph=True"
ONE_MORE = "retain_graph: 1 -> 2 as in PyTorch, not 1 -> 3 as in micrograd"


def sum_times(engine, a, b, d):
    """e = (a + b) * d, and its interior node s = a + b."""
    a, b, d = engine.Value(a), engine.Value(b), engine.Value(d)
    s = a + b
    e = s * d
    return a, b, d, s, e


def grads_of(**nodes):
    return {name: node.grad for name, node in nodes.items()}


def test_a_module_has_no_parameters_by_default(engine):
    got = engine.Module().parameters()
    expect.equal(got, [], "Module().parameters()", "the base class owns no Values: return an empty list")


@in_engine
def a_four(engine):
    """A Four module (defined where the engine lives: in the grader's sandbox too)."""
    class Four(engine.Module):
        def __init__(self):
            self.w = [engine.Value(0.5), engine.Value(-1.0), engine.Value(2.0)]
            self.b = engine.Value(0.25)

        def parameters(self):
            return [*self.w, self.b]

    return Four()


def test_zero_grad_resets_every_parameter(engine):
    model = a_four(engine)
    for p, g in zip(model.parameters(), (1.5, 0.0, -2.0, 4.0)):
        p.grad = g
    model.zero_grad()
    got = [p.grad for p in model.parameters()]
    expect.equal(got, [0.0, 0.0, 0.0, 0.0], "[p.grad for p in model.parameters()] after zero_grad()",
                 f"{EVERY} (the first, the last, all of them, through self.parameters())")


@in_engine
def a_pair(engine):
    """A Pair module (defined where the engine lives: in the grader's sandbox too)."""
    class Pair(engine.Module):
        def __init__(self):
            self.w, self.b = engine.Value(0.5), engine.Value(-1.0)

        def parameters(self):
            return [self.w, self.b]

    return Pair()


def test_zero_grad_leaves_the_data_alone(engine):
    model = a_pair(engine)
    model.w.grad, model.b.grad = 3.0, -3.0
    model.zero_grad()
    expect.equal([model.w.data, model.b.data], [0.5, -1.0], "the data after zero_grad()",
                 "zero_grad() forgets gradients only; the parameters keep their values")


@in_engine
def a_one(engine):
    """A One module (defined where the engine lives: in the grader's sandbox too)."""
    class One(engine.Module):
        def __init__(self):
            self.w = engine.Value(1.5)

        def parameters(self):
            return [self.w]

    return One()


def test_leaf_grads_pile_up_across_backward_calls_until_zero_grad(engine):
    model = a_one(engine)
    x = engine.Value(-2.0)
    (model.w * x).backward()
    (model.w * x).backward()  # a fresh graph, the same leaf
    expect.grads("two backward() calls through two graphs leave dloss/dw = x twice in w.grad: backward() adds "
                 "into leaf grads and never resets them (only zero_grad() does)", w=(model.w, -4.0))
    model.zero_grad()
    (model.w * x).backward()
    expect.grads(f"after zero_grad() the next backward() starts from 0: {EVERY}", w=(model.w, -2.0))


def test_backward_on_a_leaf_adds_like_every_leaf(engine):
    x = engine.Value(2.0)
    x.grad = 5.0
    x.backward()
    expect.equal(x.grad, 6.0, "x.grad after x.backward() on a leaf holding 5.0",
                 "a leaf root's own gradient d(x)/d(x) = 1 adds to what it holds (+= 1.0), as PyTorch; "
                 "seeding with = 1.0 throws the old gradient away")
    x.backward()
    expect.equal(x.grad, 7.0, "x.grad after a second x.backward()",
                 "a leaf is no graph to release: every backward() on it adds 1, as PyTorch")


def test_a_second_backward_raises_naming_retain_graph(engine):
    *_, e = sum_times(engine, 2.0, -3.0, 0.5)
    e.backward()
    error = expect.raises(RuntimeError, e.backward,
                          f"the first backward() released the graph: {REFUSE}")
    expect.true("retain_graph=True" in str(error),
                f"the RuntimeError says {str(error)!r}: {REFUSE}")


def test_a_refused_backward_changes_no_grad(engine):
    a, b, d, s, e = sum_times(engine, 2.0, -3.0, 0.5)
    e.backward()
    before = grads_of(a=a, b=b, d=d, s=s, e=e)
    expect.raises(RuntimeError, e.backward, REFUSE)
    after = grads_of(a=a, b=b, d=d, s=s, e=e)
    expect.equal(after, before, "the grads after the refused backward()",
                 f"{REFUSE}, and refuse before any grad changes (check first, then zero or seed)")


def test_a_new_root_on_a_used_graph_is_refused_too(engine):
    *_, e = sum_times(engine, 2.0, -3.0, 0.5)
    e.backward()
    f = e * 2.0
    error = expect.raises(RuntimeError, f.backward,
                          f"f = e * 2 reuses the released graph under e: {REFUSE}")
    expect.true("retain_graph=True" in str(error),
                f"the RuntimeError says {str(error)!r}: {REFUSE}")


def test_retain_graph_adds_exactly_one_more_copy(engine):
    a, b, d, _s, e = sum_times(engine, 2.0, -3.0, 1.0)
    e.backward(retain_graph=True)
    expect.grads("e = (a + b) * d with d = 1: de/da = 1 after one backward()", a=(a, 1.0))
    e.backward(retain_graph=True)
    expect.grads(f"a second pass adds one more copy, a.grad 1 -> 2 (interior grads must start fresh): {ONE_MORE}",
                 a=(a, 2.0), b=(b, 2.0), d=(d, -2.0))


def test_retain_graph_adds_one_more_copy_with_distinct_values(engine):
    a, b, d, s, e = sum_times(engine, 2.0, -3.0, 0.5)
    e.backward(retain_graph=True)
    e.backward(retain_graph=True)
    # PyTorch: a.grad 0.5 -> 1.0, d.grad -1 -> -2; micrograd would give 1.5 for a
    expect.grads(f"e = (a + b) * d with a, b, d = 2, -3, 0.5, two passes: each leaf holds two copies: {ONE_MORE}",
                 a=(a, 1.0), b=(b, 1.0), d=(d, -2.0))
    expect.grads(f"after each pass an interior node holds d(root)/d(node) once (stage 5), so s = a + b "
                 f"holds de/ds = d, not 2d: {ONE_MORE}",
                 s=(s, 0.5), e=(e, 1.0))


def test_after_retain_graph_a_plain_backward_works_then_a_third_raises(engine):
    a, _b, d, _s, e = sum_times(engine, 2.0, -3.0, 0.5)
    e.backward(retain_graph=True)
    e.backward()
    expect.grads(f"the retained graph can be walked once more: {ONE_MORE}", a=(a, 1.0), d=(d, -2.0))
    error = expect.raises(RuntimeError, e.backward,
                          f"the second, plain backward() released the graph: {REFUSE}")
    expect.true("retain_graph=True" in str(error), f"the RuntimeError says {str(error)!r}: {REFUSE}")


@in_engine  # 60 steps of small graphs: built where the engine lives, not one operator per message
def fit(engine, zero_grad, steps=60, lr=0.1):
    """Fit y = w*x + b to points of y = 2x - 1 by gradient descent; return every loss."""

    class Line(engine.Module):
        def __init__(self):
            self.w, self.b = engine.Value(0.0), engine.Value(0.0)

        def __call__(self, x):
            return self.w * x + self.b

        def parameters(self):
            return [self.w, self.b]

    model = Line()
    xs = [-1.0, 0.0, 1.0, 2.0]
    losses = []
    for _ in range(steps):
        loss = sum(((model(x) - (2 * x - 1)) ** 2 for x in xs), engine.Value(0.0)) / len(xs)
        if zero_grad:
            model.zero_grad()
        loss.backward()
        for p in model.parameters():
            p.data -= lr * p.grad
        losses.append(loss.data)
    return losses


def test_training_converges_only_with_zero_grad_every_step(engine):
    good = fit(engine, True)  # zero_grad=True
    expect.true(good[-1] < 1e-4,
                f"fitting y = 2x - 1 with zero_grad() every step ended at loss {good[-1]:.4g} "
                f"(started at {good[0]:.4g}), expected < 1e-4: {EVERY}")
    bad = fit(engine, False)  # zero_grad=False
    expect.true(min(bad[-10:]) > 0.1,
                f"without zero_grad() the loss still fell to {min(bad[-10:]):.4g}: backward() must add into "
                f"leaf grads, so old steps' gradients pile up and the fit keeps overshooting")
