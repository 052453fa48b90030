"""Stage 8: Neuron, Layer, MLP and a training loop whose loss falls.

The contract, clause by clause:

1. Neuron(nin) has nin weights in .w drawn from rng.uniform(-1, 1) and a
   bias .b = Value(0.0); it computes relu(w . x + b), or w . x + b with
   nonlin=False; gradients reach every weight and the bias.
2. Layer(nin, nout) keeps nout neurons in .neurons and returns a list with
   one output per neuron, always a list (even of one).
3. MLP(nin, nouts) keeps its layers in .layers: ReLU hidden layers, a linear
   last layer; it returns one Value for one output, else a list; a 1-wide
   hidden layer works; parameters() lists every weight and bias once
   (MLP(3, [4, 4, 1]) has 41).
4. MLP(..., seed=s) draws every weight from random.Random(s): the same seed
   gives the same weights, another seed others, and the global random
   module's state is left alone.
5. A wrong input length raises ValueError (zip(..., strict=True)), and so do
   inputs and targets of different lengths in train().
6. train(model, xs, ys, steps, lr) returns one float loss per step, the mean
   squared error measured before the step's update; each step's backward()
   starts from zero grads (however that is done) and every parameter moves
   by -lr * grad; the loss falls.

Weights are set by hand where a test needs exact numbers: a Neuron keeps its
weights in .w and its bias in .b, a Layer its neurons in .neurons, an MLP its
layers in .layers (the names micrograd uses, and the ones __repr__ reads).
Code that touches the random module runs @in_engine, where the engine lives."""
import pytest

from expect import Expect, close, in_engine, show
from graphs import for_all, st

expect = Expect(stage=8)

LINEAR_LAST = "the last layer must be linear"
HIDDEN_RELU = "hidden layers apply ReLU"
STRICT = "a wrong input length must raise (zip(..., strict=True)), not be silently truncated"
ZERO_EACH_STEP = ("each step's backward() must start from zero grads: "
                  "model.zero_grad() every step, before backward()")

# y = 2x + 0.5 at five points: a fit any small ReLU net can make
XS = [[-1.0], [-0.5], [0.0], [0.5], [1.0]]
YS = [-1.5, -0.5, 0.5, 1.5, 2.5]


def parts(engine, thing, *names):
    """thing's attributes, or a one-line failure naming the one that is missing."""
    for name in names:
        if not hasattr(thing, name):
            expect.fail(f"{type(thing).__name__} has no .{name}: keep the weights in .w and the bias in .b "
                        f"(Neuron), the neurons in .neurons (Layer), the layers in .layers (MLP)")
    return [getattr(thing, name) for name in names]


def set_neuron(engine, neuron, w, b):
    weights, bias = parts(engine, neuron, "w", "b")
    for wi, value in zip(weights, w, strict=True):
        wi.data = value
    bias.data = b


def set_layer(engine, layer, w, b):
    (neurons,) = parts(engine, layer, "neurons")
    for neuron in neurons:
        set_neuron(engine, neuron, w, b)


def one_value(engine, out, what):
    """out, if it is a single Value; otherwise a one-line failure."""
    expect.true(isinstance(out, engine.Value), f"{what} gave {out!r}, expected a single Value")
    return out


def run(action, rule):
    """action(); any error but 'not written yet' becomes a one-line failure naming rule."""
    try:
        return action()
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001 - reported to the learner
        expect.fail(f"{type(error).__name__}: {error}: {rule}")


def test_parameter_counts(engine):
    for what, made, want in (("Neuron(3)", lambda: engine.Neuron(3), 4),
                             ("Layer(3, 4)", lambda: engine.Layer(3, 4), 16),
                             ("MLP(3, [4, 4, 1])", lambda: engine.MLP(3, [4, 4, 1]), 41),
                             ("MLP(2, [16, 16, 1])", lambda: engine.MLP(2, [16, 16, 1]), 337)):
        params = made().parameters()
        expect.equal(len(params), want, f"len({what}.parameters())",
                     "one weight per input plus one bias, for every neuron of every layer")
        expect.true(all(isinstance(p, engine.Value) for p in params),
                    f"{what}.parameters() holds something that is not a Value: return the Values themselves")
        expect.equal(len({id(p) for p in params}), want, f"the number of different Values in {what}.parameters()",
                     "every parameter is its own Value, listed once")


def test_same_seed_same_weights_different_seed_different(engine):
    first = [p.data for p in engine.MLP(3, [4, 4, 1], seed=7).parameters()]
    again = [p.data for p in engine.MLP(3, [4, 4, 1], seed=7).parameters()]
    other = [p.data for p in engine.MLP(3, [4, 4, 1], seed=8).parameters()]
    expect.true(first == again, "MLP(3, [4, 4, 1], seed=7) built twice gave different weights: "
                                "draw every weight from random.Random(seed), the same seed gives the same numbers")
    expect.true(first != other, "seed=7 and seed=8 gave the same weights: the seed must drive the random numbers")
    expect.true(len(set(first)) > len(first) // 2,
                "most starting weights are equal: draw each weight at random (all-equal neurons learn the same thing)")


@in_engine
def global_random_around_an_mlp(engine, seed):
    """The global random module's next number with and without building MLP(3, [4, 4, 1], seed=seed) in between."""
    import random

    random.seed(2024)
    untouched = random.random()
    random.seed(2024)
    engine.MLP(3, [4, 4, 1], seed=seed)
    return untouched, random.random()


def test_seeding_an_mlp_leaves_the_global_random_state_alone(engine):
    untouched, after = global_random_around_an_mlp(engine, 7)
    expect.true(untouched == after,
                "building MLP(3, [4, 4, 1], seed=7) changed what the global random module draws next: draw from "
                "your own random.Random(seed) and leave the global random state alone (random.seed(seed) "
                "would reseed everyone else's random numbers too)")


@in_engine
def neuron_of_200(engine, seed):
    """A Neuron(200) drawn from random.Random(seed): (its weights, its bias)."""
    import random

    n = engine.Neuron(200, rng=random.Random(seed))
    return [w.data for w in n.w], n.b.data


def test_a_neuron_starts_with_weights_in_minus_one_to_one_and_a_zero_bias(engine):
    weights, bias = neuron_of_200(engine, 3)
    expect.equal(len(weights), 200, "len(Neuron(200).w)", "one weight per input")
    expect.true(all(-1.0 <= w <= 1.0 for w in weights),
                f"weights range over [{min(weights):.3g}, {max(weights):.3g}]: draw each from rng.uniform(-1, 1)")
    expect.true(min(weights) < -0.9 and max(weights) > 0.9,
                f"200 weights span only [{min(weights):.3g}, {max(weights):.3g}]: draw each from rng.uniform(-1, 1), "
                "the whole interval")
    expect.equal(bias, 0.0, "Neuron(200).b.data", "the bias starts at 0.0, as in micrograd")


def test_neuron_is_relu_of_weighted_sum_plus_bias(engine):
    n = engine.Neuron(3)
    x = [1.0, 2.0, 3.0]
    set_neuron(engine, n, [0.5, -1.0, 0.25], 1.0)
    out = one_value(engine, n(x), "Neuron(3)(x)")
    expect.equal(out.data, 0.25, "relu(0.5*1 - 1*2 + 0.25*3 + 1)", "a neuron is relu(w . x + b)")
    n.b.data = -0.5
    expect.equal(n(x).data, 0.0, "relu(0.5*1 - 1*2 + 0.25*3 - 0.5)",
                 f"a neuron is relu(w . x + b), and relu of -1.25 is 0 ({HIDDEN_RELU} by default, nonlin=True)")


def test_a_linear_neuron_skips_the_relu(engine):
    n = engine.Neuron(3, nonlin=False)
    set_neuron(engine, n, [0.5, -1.0, 0.25], -0.5)
    out = one_value(engine, n([1.0, 2.0, 3.0]), "Neuron(3, nonlin=False)(x)")
    expect.equal(out.data, -1.25, "Neuron(3, nonlin=False) at w . x + b = -1.25",
                 "nonlin=False means no ReLU: the neuron returns w . x + b as it is")


def test_gradients_flow_back_to_the_neuron_parameters(engine):
    n = engine.Neuron(3)
    set_neuron(engine, n, [0.5, -1.0, 0.25], 1.0)
    out = one_value(engine, n([1.0, 2.0, 3.0]), "Neuron(3)(x)")
    out.backward()
    expect.grads("an active neuron's d(out)/d(w_i) = x_i and d(out)/d(b) = 1: the weights and the bias must be "
                 "the Values the output was built from",
                 w0=(n.w[0], 1.0), w1=(n.w[1], 2.0), w2=(n.w[2], 3.0), b=(n.b, 1.0))


def test_a_layer_gives_one_output_per_neuron(engine):
    layer = engine.Layer(3, 4)
    (neurons,) = parts(engine, layer, "neurons")
    out = layer([1.0, -2.0, 0.5])
    expect.true(isinstance(out, list) and len(out) == 4 and all(isinstance(o, engine.Value) for o in out),
                f"Layer(3, 4)(x) gave {out!r}, expected a list of 4 Values: every neuron looks at the same x")
    expect.equal([o.data for o in out], [n([1.0, -2.0, 0.5]).data for n in neurons], "the layer's outputs",
                 "output i is neuron i applied to the whole input")


def test_the_last_layer_is_linear(engine):
    model = engine.MLP(2, [3, 1], seed=0)
    (layers,) = parts(engine, model, "layers")
    set_layer(engine, layers[0], [1.0, 1.0], 0.0)    # hidden outputs 3, 3, 3
    set_layer(engine, layers[1], [-1.0, -1.0, -1.0], -0.5)
    out = one_value(engine, model([1.0, 2.0]), "MLP(2, [3, 1])(x)")
    expect.equal(out.data, -9.5, "MLP(2, [3, 1]) output -3 - 3 - 3 - 0.5",
                 f"{LINEAR_LAST}: an output that has gone through a ReLU can never be negative")


def test_hidden_layers_apply_relu(engine):
    model = engine.MLP(2, [3, 3, 1], seed=0)
    (layers,) = parts(engine, model, "layers")
    set_layer(engine, layers[0], [1.0, 1.0], 0.0)         # 3, 3, 3
    set_layer(engine, layers[1], [-1.0, -1.0, -1.0], 0.0)  # -9 each, so relu gives 0
    set_layer(engine, layers[2], [1.0, 1.0, 1.0], 0.25)
    out = one_value(engine, model([1.0, 2.0]), "MLP(2, [3, 3, 1])(x)")
    expect.equal(out.data, 0.25, "MLP(2, [3, 3, 1]) output when the second hidden layer's sums are all -9",
                 f"{HIDDEN_RELU} (every layer but the last), so those -9s become 0 and only the bias 0.25 is left")


def test_the_printed_network_shows_relu_hidden_layers_and_a_linear_last_layer(engine):
    model = engine.MLP(2, [3, 1], seed=0)
    want = "MLP of [Layer of [ReLUNeuron(2), ReLUNeuron(2), ReLUNeuron(2)], Layer of [LinearNeuron(3)]]"
    expect.equal(repr(model), want, "repr(MLP(2, [3, 1]))",
                 "hidden neurons are ReLU (nonlin=True), the last layer must be linear (nonlin=False), "
                 "and each neuron has one weight per input")


def test_one_output_is_a_value_several_are_a_list(engine):
    one = engine.MLP(2, [3, 1], seed=0)([0.5, -1.0])
    expect.true(isinstance(one, engine.Value),
                f"MLP(2, [3, 1])(x) gave {one!r}, expected a single Value (so that loss = (out - y)**2 works)")
    two = engine.MLP(2, [3, 2], seed=0)([0.5, -1.0])
    expect.true(isinstance(two, list) and len(two) == 2 and all(isinstance(o, engine.Value) for o in two),
                f"MLP(2, [3, 2])(x) gave {two!r}, expected a list of 2 Values")


def test_a_one_wide_hidden_layer_works(engine):
    model = engine.MLP(2, [16, 1, 1], seed=3)
    rule = ("a 1-wide hidden layer must hand the next layer a list of one Value "
            "(micrograd crashes here); only the MLP's final output is unwrapped")
    out = run(lambda: model([0.5, -1.0]), rule)
    expect.true(isinstance(out, engine.Value), f"MLP(2, [16, 1, 1])(x) gave {out!r}, expected a Value: {rule}")
    run(out.backward, rule)
    expect.true(all(isinstance(p.grad, float) for p in model.parameters()),
                f"after backward() some grads of MLP(2, [16, 1, 1]) are not floats: {rule}")


def test_a_wrong_input_length_raises(engine):
    n = engine.Neuron(3)
    expect.raises(ValueError, lambda: n([1.0, 2.0]), f"Neuron(3) given 2 inputs: {STRICT}")
    expect.raises(ValueError, lambda: n([1.0, 2.0, 3.0, 4.0]), f"Neuron(3) given 4 inputs: {STRICT}")
    model = engine.MLP(3, [4, 1], seed=0)
    expect.raises(ValueError, lambda: model([1.0, 2.0]), f"MLP(3, [4, 1]) given 2 inputs: {STRICT}")


def test_train_refuses_inputs_and_targets_of_different_lengths(engine):
    model = engine.MLP(1, [2, 1], seed=0)
    expect.raises(ValueError, lambda: engine.train(model, [[0.0], [1.0], [2.0]], [0.0, 1.0], steps=1, lr=0.1),
                  "3 inputs but 2 targets: say so (zip(..., strict=True)) rather than silently train on the first 2",
                  otherwise="train() given 3 inputs and 2 targets crashed before it compared their lengths")


def test_train_returns_one_loss_per_step(engine):
    losses = engine.train(engine.MLP(1, [8, 1], seed=2), XS, YS, steps=5, lr=0.1)
    expect.true(isinstance(losses, list) and len(losses) == 5,
                f"train(..., steps=5) returned {losses!r}, expected a list of 5 losses, one per step")
    expect.true(all(type(loss) is float for loss in losses),
                f"train() returned {[type(loss).__name__ for loss in losses]}: store loss.data (a float), "
                f"not the Value (which would keep every step's graph alive)")


def test_train_reports_the_mean_squared_error(engine):
    model = engine.MLP(1, [8, 1], seed=2)
    outs = [one_value(engine, model(x), f"MLP(1, [8, 1])({x})") for x in XS]
    want = sum((out.data - y) ** 2 for out, y in zip(outs, YS)) / len(XS)
    losses = engine.train(model, XS, YS, steps=1, lr=0.1)
    expect.equal(losses[0], want, "the first loss train() returned",
                 "the loss is the mean squared error over the data set, measured before the step's update")


def one_step(engine, model, lr, mean=True, zero=True, sign=-1.0):
    """A step of train(): the squared error (its mean, or with mean=False its sum), zero_grad
    (unless zero=False), backward, p += sign * lr * grad.  The defaults are the right step;
    the others are classic mistakes, used to recognise them."""
    loss = sum(((model(x) - y) ** 2 for x, y in zip(XS, YS)), engine.Value(0.0))
    if mean:
        loss = loss / len(XS)
    if zero:
        model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data += sign * lr * p.grad


def after_steps(engine, steps, **how):
    """The parameters of MLP(1, [8, 1], seed=2) after ``steps`` of one_step(**how)."""
    twin = engine.MLP(1, [8, 1], seed=2)
    for _ in range(steps):
        one_step(engine, twin, 0.1, **how)
    return [p.data for p in twin.parameters()]


def same(got, want):
    return len(got) == len(want) and all(abs(g - w) < 1e-9 for g, w in zip(got, want))


def expect_twins(engine):
    """train() is judged against a twin built with the same seed: they must start equal."""
    first, again = (trained(engine, 0) for _ in range(2))
    expect.true(same(first, again), "MLP(1, [8, 1], seed=2) built twice starts from different weights, so train() "
                                    "cannot be compared with clean steps: make the seed decide the weights first "
                                    "(test_same_seed_same_weights_different_seed_different)")


def trained(engine, steps):
    model = engine.MLP(1, [8, 1], seed=2)
    if steps:
        engine.train(model, XS, YS, steps=steps, lr=0.1)
    return [p.data for p in model.parameters()]


def test_train_steps_against_the_gradient(engine):
    expect_twins(engine)
    got = trained(engine, 1)
    rule = ("gradient descent moves every parameter against its gradient, by lr times it: "
            "p.data -= lr * p.grad, with the grads of the mean squared error")
    if same(got, after_steps(engine, 1)):
        return
    if same(got, after_steps(engine, 1, sign=1.0)):
        expect.fail(f"after one step of train(lr=0.1) every parameter moved by +lr * p.grad, uphill: {rule}")
    if same(got, after_steps(engine, 1, mean=False)):
        expect.fail("after one step of train(lr=0.1) the parameters moved by the gradient of the *summed* squared "
                    "error: the loss is the mean squared error, so divide the sum by len(xs)")
    moved = sum(abs(g - w) > 1e-12 for g, w in zip(got, [p.data for p in engine.MLP(1, [8, 1], seed=2).parameters()]))
    expect.fail(f"after one step of train(lr=0.1) the parameters are not p - 0.1 * p.grad "
                f"({moved} of {len(got)} moved at all): {rule}")


def test_train_zeroes_the_grads_every_step(engine):
    expect_twins(engine)
    got = trained(engine, 3)
    if same(got, after_steps(engine, 3)):
        return
    if not same(trained(engine, 1), after_steps(engine, 1)):
        expect.fail("after 3 steps of train() the parameters differ from 3 clean steps, and the first step already "
                    "differs: see the test of one step (test_train_steps_against_the_gradient) first")
    if same(got, after_steps(engine, 3, zero=False)):
        expect.fail(f"one step of train() is right, but 3 steps give exactly what 3 steps without zeroing give: the "
                    f"old gradients leak into later steps: {ZERO_EACH_STEP}")
    expect.fail(f"one step of train() is right, but after 3 steps the parameters differ from 3 clean steps "
                f"(mean squared error, zero the grads, backward, p.data -= lr * p.grad): {ZERO_EACH_STEP}")
def test_train_makes_the_loss_fall(engine):
    losses = engine.train(engine.MLP(1, [8, 1], seed=2), XS, YS, steps=30, lr=0.1)
    expect.true(losses[-1] < 0.1 * losses[0],
                f"30 steps of train() took the loss from {losses[0]:.4g} to {losses[-1]:.4g}, expected below "
                f"10 % of the start: forward, zero_grad, backward, then p.data -= lr * p.grad for every parameter")


def forward(layers, x):
    """An MLP on plain floats: ``layers`` holds per layer [(weights, bias), ...]; ReLU on every
    layer but the last.  Returns (the sum of the outputs, every hidden pre-activation)."""
    pre = []
    for i, layer in enumerate(layers):
        sums = [sum(w * xi for w, xi in zip(ws, x)) + b for ws, b in layer]
        if i < len(layers) - 1:
            pre += sums
            sums = [max(s, 0.0) for s in sums]
        x = sums
    return sum(x), pre


@pytest.mark.properties
def test_random_networks_match_central_differences(engine):
    """Random MLPs: every weight's and bias's grad of the summed outputs against central differences."""
    shapes = st.tuples(st.integers(1, 3), st.lists(st.integers(1, 3), min_size=1, max_size=3),
                       st.integers(0, 10_000), st.lists(st.integers(-20, 20), min_size=3, max_size=3))
    for_all((2, [2, 1], 0, [5, -3, 0]), shapes, lambda shape: expect_network_gradients(engine, *shape))


def expect_network_gradients(engine, nin, widths, seed, xs):
    x = [v / 10 for v in xs[:nin]]
    model = engine.MLP(nin, widths, seed=seed)
    (layers,) = parts(engine, model, "layers")
    params = [[(list(n.w), n.b) for n in parts(engine, layer, "neurons")[0]] for layer in layers]
    floats = [[([w.data for w in ws], b.data) for ws, b in layer] for layer in params]
    _, pre = forward(floats, x)
    if any(abs(z) < 1e-3 for z in pre):
        return  # a ReLU sitting on its kink: no slope to compare with
    out = model(x)
    total = out if isinstance(out, engine.Value) else sum(out[1:], out[0])
    total.backward()
    h, wrong = 1e-6, []
    for li, layer in enumerate(params):
        for ni, (ws, b) in enumerate(layer):
            for k, node in enumerate([*ws, b]):
                def bumped(d):
                    copy = [[(list(w), bb) for w, bb in lay] for lay in floats]
                    w, bb = copy[li][ni]
                    if k < len(w):
                        w[k] += d
                    else:
                        bb += d
                    copy[li][ni] = (w, bb)
                    return forward(copy, x)[0]
                want = (bumped(h) - bumped(-h)) / (2 * h)
                if not close(node.grad, want, tol=1e-4):
                    name = f"layers[{li}].neurons[{ni}]." + (f"w[{k}]" if k < len(ws) else "b")
                    wrong.append(f"{name}.grad is {show(node.grad)}, expected {show(want)}")
    if wrong:
        expect.fail(f"MLP({nin}, {widths}, seed={seed}) at x = {x}, backward() of the sum of its outputs: "
                    f"{'; '.join(wrong[:4])}{' ...' if len(wrong) > 4 else ''}: every weight and bias must get "
                    f"d(out)/d(parameter) (central differences on plain floats; ReLU hidden, linear last layer)")
