"""The kinds of failure: one list, data that crosses from the test process to every reader.

Most basic first: the order ``kata check`` shows them in (a module that does not
import explains every other failure).  The root conftest names a failing test's
kind where it rewrites the test's message (``results.record_kind``); the results
file carries it (``"kind"``), and the learner's runner, its cache, the feedback,
the grader and the class summary read it from there, never from the words,
which are in whatever language the run spoke.  Each kind's name for a learner
is the catalogue's ``check.kind.<kind>``.
"""
KINDS = ("import", "unwritten", "hang", "crash", "wrong", "other", "not run")
KIND_PROPERTY = "kata_kind"  # the key in a pytest report's user_properties
SAID_PROPERTY = "kata_said"  # ... of the failure's messages as data (i18n.Text.data(): id and args)
MISTAKE_PROPERTY = "kata_mistake"  # ... of the classic mistake they name (core.mistakes label id)
