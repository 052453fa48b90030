"""How quickly the kata's page answers from a cold start (issue 28's goal: under 10 s at load <= 4).

    python benchmarks/page_start.py SITE [--rounds 3] [--at-once]

SITE is a folder ``kata site SITE --fetch`` wrote.  Each round serves it on 127.0.0.1 and opens
it in headless Chromium with a fresh profile (``tooltests/test_site.py``'s ``serve`` and
``browser_at``; selenium and Chromium as the tool tests need them), then prints the seconds to
"ready", to the end of the worker's warm-up of pytest (``inpage.warm``), the first stage-1
check after it and a re-check.  ``--at-once`` checks as soon as the page is ready instead,
without waiting for the warm-up (a learner who clicks Check before reading).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tooltests")]

from test_site import browser_at, serve  # noqa: E402

WARMED = ("(async () => { for (let i = 0; i < 1200 && window.kata.timings.warm_ms === null; i++)"
          " await new Promise((r) => setTimeout(r, 50)); return window.kata.timings.warm_ms; })()")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("site", type=Path)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--at-once", action="store_true", help="check as soon as the page is ready")
    args = p.parse_args(argv)
    url, stop = serve(args.site)
    try:
        for i in range(args.rounds):
            opened = time.monotonic()
            with browser_at(url) as page:
                ready = time.monotonic() - opened
                warm = None if args.at_once else page.call(WARMED)
                before = time.monotonic()
                page.check(1)
                first = time.monotonic()
                page.check(1)
                again = time.monotonic() - first
            warmed = "" if warm is None else f"warm-up {warm / 1000:.1f} s (done {before - opened:.1f} s), "
            print(f"round {i + 1}: ready {ready:.1f} s, {warmed}first check {first - before:.2f} s "
                  f"({first - opened:.1f} s from opening), re-check {again:.2f} s, "
                  f"load average {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
