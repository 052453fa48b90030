"""``kata verify``: prove the kata is sound, stage by stage.

Every reference test passes, every stub test fails, ``exercises/`` is what
``kata build`` writes, and (with ``--mutation``) every mutant of the reference
is killed.  Exit 0 only if all of that holds.
"""
from __future__ import annotations

from autograd_kata.core.build import build
from autograd_kata.core.manifest import STAGES, find_root


def verify(root, out=print) -> int:
    from autograd_kata.core.runner import run

    ref = run("solutions", STAGES, root)
    stub = run("exercises", STAGES, root)
    bad = 0
    out(f"{'stage':<6}{'title':<30}{'reference (must pass)':<24}{'stubs (must fail)':<20}")
    for s in STAGES:
        r, x = ref[s.number], stub[s.number]
        stub_passed = [t.name for t in x.tests if t.status == "passed"]
        ref_ok = r.ok
        stub_ok = not x.problem and x.total > 0 and not stub_passed
        mark = "ok" if ref_ok and stub_ok else "FAIL"
        bad += mark != "ok"
        out(f"{s.number:<6}{s.title:<30}{f'{r.passed}/{r.total} passed':<24}"
            f"{f'{x.total - x.passed}/{x.total} failed':<20}{mark}")
        if r.problem or x.problem:
            out(f"      {r.problem or x.problem}")
        for t in r.tests:
            if t.status != "passed":
                out(f"      reference {t.status}: {t.name}: {t.message.splitlines()[0] if t.message else ''}")
        for name in stub_passed:
            out(f"      stub PASSES (a test that cannot fail?): {name}")
    out("")
    built = build(root, check=True, out=out)
    if bad or built:
        out(f"kata verify: FAILED ({bad} stage(s) wrong{', exercises/ stale' if built else ''})")
        return 1
    out("kata verify: every reference test passes, every stub test fails, exercises/ is up to date.")
    return 0


def verify_command(mutation: bool = False) -> int:
    """``kata verify [--mutation]``."""
    root = find_root()
    code = verify(root)
    if mutation:
        from autograd_kata.maintainer.mutation import gate
        code = gate(root) or code
    return code
