"""Every count the docs state is checked against the thing it counts, or not stated.

A number in prose goes stale without a sound ("57 in all" stayed after the 58th
mistake; issue 17 item 2), and a stale figure must never fail a gate (issue 27: the
mutation gate failed with every mutant killed because README said 956).  So the
docs state no count that a new stage, operation or mistake changes (how many
stages, mistakes or mutants): the tool says those when it runs (``kata status``,
``kata mutate``).  What they do state is checked here, each sentence found by a
pattern; a sentence the pattern no longer finds fails too: reword the pattern with
the sentence, never drop the check.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_kata.core.manifest import STAGES, stage
from autograd_kata.core.operations import OPERATIONS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "README.ja.md", "docs/instructors.md", "docs/maintainers.md", "CONTRIBUTING.md")
README = "\n".join((ROOT / name).read_text(encoding="utf-8")  # the counts stand in the docs of their audience
                   for name in ("README.md", "docs/instructors.md", "docs/maintainers.md"))
#: a count of what grows: "eight stages", "8 つのステージ", "64 in all", "(956 of 956 killed)"
COUNTS = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+) stages\b|(?:[2-9]|\d{2,}) ?つのステージ"
                    r"|\d+ in all\)|\(\d+ of \d+ killed\)|\d+ (?:classic )?mistakes\b", re.IGNORECASE)


def catalogue_files() -> list[Path]:
    return sorted((ROOT / "autograd_kata" / "locales").glob("*/*.po"))


@pytest.mark.parametrize("name", [*DOCS, *(p.relative_to(ROOT).as_posix() for p in catalogue_files())])
def test_no_count_of_what_grows_is_written_down(name):
    path = ROOT / name
    assert path.is_file(), f"{name} is gone: update DOCS in {__file__}"
    found = [m[0] for m in COUNTS.finditer(path.read_text(encoding="utf-8"))]
    assert not found, (f"{name} states {found}: a count that the next stage, operation or mistake makes "
                       f"stale; drop it, or fill it from the manifest (a catalogue field such as {{n}})")


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


def test_each_stage_module_lists_every_method_of_the_table_it_adds():
    """README's stage table gives examples; the module's own docstring ("You write: ...") is the
    list a learner reads, written beside the code in reference/engine.py."""
    for s in STAGES:
        adds = [op.method for op in OPERATIONS if op.method and op.stage == s.number]
        if not adds:
            continue
        doc = (ROOT / s.source("exercises")).read_text(encoding="utf-8").split('"""')[1]
        missing = [m for m in adds if not re.search(rf"\b{m}\b", doc)]
        assert not missing, (f"{s.source('exercises')}'s docstring does not name {missing}, which the operations "
                             f"table adds in stage {s.number}: name them in its 'You write:' line, in "
                             f"reference/engine.py (its '# >> stage {s.number} only' range)")


@pytest.mark.parametrize("guide", ["maintainers.md", "instructors.md"])
def test_the_guides_list_every_section_in_their_contents(guide):
    text = (ROOT / "docs" / guide).read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    contents = text[text.index("## Contents"):]
    contents = contents[:contents.index("\n## ", 1)]
    listed = re.findall(r"\[([^\]]+)\]\(#([^)]+)\)", contents)
    anchor = {h: re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
    assert sorted(h for h, _ in listed) == sorted(h for h in headings if h != "Contents"), (
        f"docs/{guide}'s Contents lists {sorted(h for h, _ in listed)}, its sections are {headings}")
    wrong = [(h, a) for h, a in listed if anchor.get(h) != a]
    assert not wrong, f"Contents links that lead nowhere (GitHub's anchor of each heading): {wrong}"


def test_contributing_points_at_the_maintainers_guide():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "(docs/maintainers.md)" in text and len(text.splitlines()) < 40, \
        "CONTRIBUTING.md is the short way in: it points at docs/maintainers.md and stays under 40 lines"
    for section in re.findall(r"\(docs/maintainers\.md#([^)]+)\)", text):
        assert f"(#{section})" in (ROOT / "docs" / "maintainers.md").read_text(encoding="utf-8"), section


def test_the_readme_is_a_learners_page_and_its_links_into_the_guides_lead_somewhere():
    """README is for a learner (issue 27: 867 lines for three audiences): short, with what only
    maintainers or instructors need in their guides, and each link into a guide's section real."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250, (
        f"README.md is {len(text.splitlines())} lines: a learner's page stays under 250; move what only "
        "maintainers or instructors need to docs/maintainers.md or docs/instructors.md")
    for guide, section in re.findall(r"\(docs/(maintainers|instructors)\.md#([^)]+)\)", text):
        headings = re.findall(r"^## (.+)$", (ROOT / "docs" / f"{guide}.md").read_text(encoding="utf-8"), re.MULTILINE)
        anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
        assert section in anchors, f"README links to docs/{guide}.md#{section}, which has no such section"
