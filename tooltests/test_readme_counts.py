"""Every count README states is checked against the thing it counts.

A number in prose goes stale without a sound ("57 in all" stayed after the 58th
mistake; issue 17 item 2).  Each check here finds its sentence by a pattern and
says, when it fails, which number is stale, what it should be, and where the truth
comes from.  A sentence the pattern no longer finds fails too: reword the
pattern with the sentence, never drop the check.

The mutation gate's figure ("956 of 956 killed") takes a full mutmut run to
know: `kata mutate` compares it with its own count and fails when they differ
(tested in test_mutation.py); here only its shape is checked.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.operations import OPERATIONS
from autograd_kata.maintainer.mistakes import MISTAKES
from autograd_kata.maintainer.mutation import README_FIGURE

ROOT = Path(__file__).resolve().parent.parent
README = "\n".join((ROOT / name).read_text(encoding="utf-8")  # the counts stand in the docs of their audience
                   for name in ("README.md", "docs/instructors.md", "docs/maintainers.md"))


def stated(pattern: str) -> list[int]:
    """The numbers README states where ``pattern`` (one group: the number) matches."""
    found = [int(m.group(1).replace(",", "")) for m in re.finditer(pattern, README)]
    assert found, f"README no longer has a sentence matching {pattern!r}: update the pattern in {__file__}"
    return found


def test_the_mistake_count_is_the_catalogues():
    for n in stated(r"\", (\d+) in all\)"):
        assert n == len(MISTAKES), (
            f"README says the classic mistakes are {n} in all; autograd_kata/maintainer/mistakes.py "
            f"lists {len(MISTAKES)}: write {len(MISTAKES)} in README's 'Classic mistakes' paragraph")


def test_the_report_size_counts_every_stage():
    for n in stated(r"A report of (\d+) stages"):
        assert n == len(STAGES), (
            f"README's report bound speaks of {n} stages; the manifest has {len(STAGES)}: write "
            f"{len(STAGES)} (and measure the report's size again)")


def test_the_mutation_figure_says_every_mutant_is_killed():
    match = re.search(README_FIGURE, README)
    assert match, ("README's 'Mutation gate' paragraph lost its figure '(N of N killed)', which "
                   "kata mutate checks against its run: put it back")
    killed, total = int(match["killed"]), int(match["total"])
    assert killed == total, f"README says {killed} of {total} mutants are killed; the gate passes only with all"


def collected(*args: str) -> int:
    """How many tests of stage 5 a learner's run collects (exercises/, no --impl)."""
    run = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                          *args, stage(5).test_file], cwd=ROOT, capture_output=True, text=True, timeout=120)
    found = re.search(r"(\d+)(?:/\d+)? tests? collected", run.stdout)
    assert found, run.stdout[-2000:] + run.stderr[-2000:]
    return int(found.group(1))


@pytest.mark.timeout(120)
def test_the_page_runs_every_stage_5_test_as_readme_says():
    assert "Every stage test runs in the page" in README, \
        "README no longer says every stage test runs in the page: update this test with what it says now"
    here, page = collected(), collected("-m", "not native_only")
    assert page == here, (f"README says every stage test runs in the page, but {here - page} of stage 5's {here} "
                          "are marked native_only (left out of the page): unmark them or say so in README")


@pytest.mark.parametrize("s", [s for s in STAGES if any(op.method and op.stage == s.number for op in OPERATIONS)],
                         ids=lambda s: s.module)
def test_the_stage_table_names_every_method_the_stage_adds(s):
    row = next((line for line in README.splitlines() if line.startswith(f"| {s.number} | `{s.module}`")), None)
    assert row, f"README's stage table has no row for stage {s.number} ({s.module})"
    missing = [op.method for op in OPERATIONS if op.method and op.stage == s.number and f"`{op.method}`" not in row]
    assert not missing, (
        f"README's stage table, row {s.number}, does not name {missing}, which the operations table "
        f"(autograd_kata/core/operations.py) adds in stage {s.number}: add them to 'you write'")
