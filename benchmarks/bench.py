"""Side-by-side speed of the reference engine and micrograd 0.1.0, in one run.

    python -m pip install -e ".[bench]"
    python benchmarks/bench.py            # best of 5 rounds each, interleaved

Two workloads from issue #2: a 50,000-op chain (forward + backward), and one
training step of MLP(2, [16, 16, 1]) on 60 points (forward, zero_grad,
backward, update).  micrograd's topological sort recurses, so its recursion
limit is raised for the chain; ours needs no such help.  The rounds alternate
between the engines (reference, micrograd, reference, ...), so a busy machine
slows both alike; each engine's best round counts.  --gc says what the
garbage collector does while a run is timed (see best_of_interleaved).  Exit status 1 if the
reference is slower than micrograd on either workload.

Measured (python benchmarks/bench.py --gc MODE --rounds 9, Python 3.11, 2 shared
cores; ratio reference/micrograd, below 1.00 = reference faster):

    --gc charge   chain 0.61  MLP step 0.37   (395 vs 647 ms, 145 vs 396 ms)
    --gc auto     chain 0.89  MLP step 1.00   (417 vs 471 ms, 190 vs 191 ms)
    --gc off      chain 0.94  MLP step 1.09   (106 vs 113 ms,  52 vs  48 ms)

Repeated runs move each ratio by a few hundredths (auto the most: when a full
collection falls decides it).  With the collector off the MLP step stays about
10% slower: its backward() also refuses a released graph, resets interior grads
and drops every closure it used, and its order is an explicit stack where
micrograd recurses.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def engines(stage_module: str):
    ours = importlib.import_module(stage_module)
    try:
        from micrograd.engine import Value as MValue
        from micrograd.nn import MLP as MMLP
    except ImportError:
        sys.exit('micrograd is not installed: python -m pip install -e ".[bench]"')
    return {"reference": (ours.Value, ours.MLP), "micrograd 0.1.0": (MValue, MMLP)}


def chain(Value, n=50_000):
    x = Value(0.5)
    y = x
    for i in range(n):  # n ops, alternating * and +
        y = y * 0.9999 if i % 2 else y + 0.001
    y.backward()
    return y  # the graph: the timer decides who pays for freeing it (best_of_interleaved)


def mlp_step(Value, MLP, model, points):
    xs, ys = points
    scores = [model(x) for x in xs]
    loss = sum(((s - y) ** 2 for s, y in zip(scores, ys, strict=True)), Value(0.0)) * (1.0 / len(xs))
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        p.data -= 0.01 * p.grad
    return loss  # the graph, as in chain()


def best_of_interleaved(rounds, fns, gc_mode="charge"):
    """{name: best time} over ``rounds`` rounds, each running every fn once in turn.

    Each fn returns the graph it built.  Each run starts with no garbage of an
    earlier one (collected outside the timer).  gc_mode "charge" (the default):
    each run also pays for freeing its graph, as each step of a training loop
    does in the long run (ours is freed when the last reference goes, inside
    the timer; micrograd's graphs are reference cycles, which only a full
    collection frees, also inside the timer); "auto": the collector runs as it
    happens to during the run, and the graph a run leaves is nobody's cost (it
    is freed after the timer stops, for both engines); "off": the collector is
    off while the run is timed, and the graph is again freed after the timer:
    the arithmetic alone (our backward() still drops each closure as it goes,
    and that is counted)."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for name, fn in fns.items():
            gc.collect()
            if gc_mode == "off":
                gc.disable()
            start = time.perf_counter()
            graph = fn()
            if gc_mode == "charge":
                del graph  # ours is freed here, by reference counting ...
                gc.collect()  # ... micrograd's cycles here
            best[name] = min(best[name], time.perf_counter() - start)
            graph = None  # auto, off: freed outside the timer, whoever frees it
            gc.enable()
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--module", default="solutions.stage08_mlp", help="the engine to measure")
    ap.add_argument("--gc", choices=("charge", "auto", "off"), default="charge",
                    help="the garbage collector: each run also pays a full collection of what it left "
                         "(charge, the default: a training loop's steady state), runs as it happens to "
                         "(auto), or is off while a run is timed (off: the arithmetic alone)")
    args = ap.parse_args(argv)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 200_000))  # for micrograd's recursive sort
    rng = random.Random(0)
    points = ([[rng.uniform(-2, 2), rng.uniform(-2, 2)] for _ in range(60)],
              [rng.choice((-1.0, 1.0)) for _ in range(60)])
    chains, steps = {}, {}
    for name, (Value, MLP) in engines(args.module).items():
        random.seed(1)
        model = MLP(2, [16, 16, 1])
        chains[name] = lambda Value=Value: chain(Value)
        steps[name] = lambda Value=Value, MLP=MLP, model=model: mlp_step(Value, MLP, model, points)
    chain_times, step_times = (best_of_interleaved(args.rounds, chains, args.gc),
                               best_of_interleaved(args.rounds, steps, args.gc))
    results = {name: (chain_times[name], step_times[name]) for name in chains}
    print(f"garbage collector: {args.gc}; best of {args.rounds} interleaved rounds")
    print(f"{'engine':<18}{'50k-op chain':>14}{'MLP step (60 pts)':>20}")
    for name, (c, m) in results.items():
        print(f"{name:<18}{c * 1000:>11.1f} ms{m * 1000:>17.1f} ms")
    (oc, om), (mc, mm) = results["reference"], results["micrograd 0.1.0"]
    print(f"{'ratio ref/micro':<18}{oc / mc:>14.2f}{om / mm:>20.2f}   (below 1.00 = reference faster)")
    return 0 if oc <= mc and om <= mm else 1


if __name__ == "__main__":
    sys.exit(main())
