"""The manifest is the one list of stages: every file it names exists and is well formed."""
import re
from pathlib import Path

import pytest

from autograd_kata.core.build import regions
from autograd_kata.core.manifest import LANGS, STAGES, find_root, stage, stage_of_module

ROOT = Path(__file__).resolve().parent.parent


def test_stage_numbers_run_one_to_n_with_unique_modules():
    assert [s.number for s in STAGES] == list(range(1, len(STAGES) + 1))
    assert len({s.module for s in STAGES}) == len(STAGES)


def test_unknown_stage_lists_the_valid_ones():
    with pytest.raises(ValueError, match="the stages are 1, 2, 3, 4, 5, 6, 7, 8"):
        stage(9)
    assert stage("4").module == "stage04_tanh"


def test_module_names_map_back_to_stages():
    for s in STAGES:
        assert stage_of_module(f"solutions.{s.module}") is s
        assert stage_of_module(f"tests.test_{s.module}") is s
    assert stage_of_module("tooltests.test_manifest") is None


@pytest.mark.parametrize("s", STAGES, ids=lambda s: s.module)
def test_every_stage_has_all_its_files(s):
    for path in (s.source("solutions"), s.source("exercises"), s.test_file,
                 *(s.hint_file(lang) for lang in LANGS)):
        assert (ROOT / path).is_file(), f"{path} is missing"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("s", STAGES, ids=lambda s: s.module)
def test_hints_have_three_levels_and_no_reference_line(s, lang):
    text = (ROOT / s.hint_file(lang)).read_text(encoding="utf-8")
    assert text.startswith("# "), "a hint starts with its title"
    levels = re.findall(r"^## (?:Level |レベル)(\d)", text, flags=re.M)  # ja files say レベル
    assert levels == ["1", "2", "3"], f"{s.hint_file(lang)} has levels {levels}"
    reference = (ROOT / s.source("solutions")).read_text(encoding="utf-8")
    for region in regions(reference, s):
        for line in region.text.splitlines():
            code = line.split("#")[0].strip()
            if len(code) >= 30:
                assert code not in text, f"{s.hint_file(lang)} quotes the reference: {code}"


def test_readme_table_names_every_stage_module():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for s in STAGES:
        assert f"`{s.module}`" in readme, f"README's stage table lacks {s.module}"


def test_find_root_walks_up_from_a_subfolder():
    assert find_root(ROOT / "tests") == ROOT


ARTICLE_MAPS = sorted((ROOT / "docs").glob("article-map*.md"))


def defined_tests(*files: Path) -> set[str]:
    return {name for f in files for name in re.findall(r"^def (test_\w+)", f.read_text(encoding="utf-8"), re.M)}


@pytest.mark.parametrize("article_map", ARTICLE_MAPS, ids=lambda p: p.name)
def test_every_test_the_article_map_names_exists_where_it_says(article_map):
    """A row names a test file and tests in it: a learner who looks them up finds them there."""
    everywhere = defined_tests(*(ROOT / "tests").glob("test_*.py"))
    named, wrong = 0, []
    for number, line in enumerate(article_map.read_text(encoding="utf-8").splitlines(), 1):
        files = [ROOT / path for path in re.findall(r"tests/test_\w+\.py", line)]
        there = defined_tests(*files) if files else everywhere
        for name in re.findall(r"`(test_\w+)`", line):
            named += 1
            if name not in there:
                wrong.append(f"{article_map.name}:{number}: {name} is not a test in "
                             f"{', '.join(p.name for p in files) or 'tests/'}")
    assert named >= len(STAGES), f"{article_map.name} names {named} tests: the reading of its rows broke"
    assert wrong == [], "\n".join(wrong)
