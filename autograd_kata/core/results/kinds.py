"""The kinds of failure: one list, data that crosses from the test process to every reader.

Most basic first: the order ``kata check`` shows them in (a module that does not
import explains every other failure).  The teaching verdicts (``core/results/verdicts.py``)
name a failing test's kind where they rewrite the test's message (``results.record_kind``);
the results file carries it (``"kind"``), and every reader gets it as a field of the one
model (``core/results/model.py``'s ``TestResult.kind``), never from the words,
which are in whatever language the run spoke.  Each kind's name for a learner
is the catalogue's ``check.kind.<kind>``.
"""
KINDS = ("import", "unwritten", "hang", "crash", "wrong", "other", "not run")
KIND_PROPERTY = "kata_kind"  # the key in a pytest report's user_properties
SAID_PROPERTY = "kata_said"  # ... of the failure's messages as data (i18n.Text.data(): id and args)
MISTAKE_PROPERTY = "kata_mistake"  # ... of the classic mistake they name (core.mistakes label id)
WHERE_PROPERTY = "kata_where"  # ... of the learner's file and line it failed in


def hang_dump(results):
    """Beside a results file (a ``Path``): the stacks faulthandler wrote when it ended a run whose
    time limit no signal could enforce (``results.channel.CLoopWatch``); the runner reads them."""
    return results.with_name(results.name + ".hang")


def cause_first(tests) -> list:
    """The failing ones of ``tests`` (``outcome.TestResult``s), the one that explains
    the most first: by kind, most basic first, except that a wrong value naming a classic
    mistake comes before a crash (the mistake is what the crash follows from: a step that
    climbs overflows later); then in the given order.  ``kata check`` shows the first in
    full, and a grade report names it."""
    rank = {kind: n for n, kind in enumerate(KINDS)}

    def place(test) -> float:
        if test.kind == "wrong" and test.mistakes:
            return rank["crash"] - 0.5
        return rank.get(test.kind, len(rank))
    failing = [(i, test) for i, test in enumerate(tests) if test.status != "passed"]
    failing.sort(key=lambda it: (place(it[1]), it[0]))
    return [test for _, test in failing]
