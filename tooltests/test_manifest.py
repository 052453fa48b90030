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
    with pytest.raises(ValueError, match=f"the stages are {', '.join(str(s.number) for s in STAGES)}$"):
        stage(len(STAGES) + 1)
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


# --- roles and catalogue ids (issue 17 item 3) ---------------------------------------

def test_every_role_is_held_by_exactly_one_stage():
    from autograd_kata.core.manifest import ROLES, role

    held = [s.role for s in STAGES if s.role]
    assert sorted(held) == sorted(ROLES), f"roles held {held}, roles declared {sorted(ROLES)}"
    mlp = role("mlp")
    assert mlp.role == "mlp" and (ROOT / mlp.source("solutions")).is_file()
    with pytest.raises(KeyError, match="no role 'feelings'; the roles are mlp"):
        role("feelings")


def test_a_role_held_twice_or_never_is_named(monkeypatch):
    from dataclasses import replace

    from autograd_kata.core import manifest

    twice = (*STAGES, replace(manifest.role("mlp"), number=len(STAGES) + 1, slug="again"))  # the last need not be it
    monkeypatch.setattr(manifest, "STAGES", twice)
    with pytest.raises(LookupError, match="role 'mlp' is held by 2 stages in STAGES, not one"):
        manifest.role("mlp")
    monkeypatch.setattr(manifest, "STAGES", tuple(replace(s, role="") for s in STAGES))
    with pytest.raises(LookupError, match="role 'mlp' is held by 0 stages"):
        manifest.role("mlp")


def test_the_mlp_role_is_the_stage_that_defines_mlp_and_train():
    from autograd_kata.core.manifest import role

    source = (ROOT / role("mlp").source("solutions")).read_text(encoding="utf-8")
    assert re.search(r"^class MLP\b", source, re.M) and re.search(r"^def train\(", source, re.M)


def test_every_title_and_lesson_id_is_in_both_catalogues():
    from autograd_kata.core.i18n import MESSAGES
    from autograd_kata.core.manifest import check_ids

    check_ids()  # raises on a missing one
    for lang in LANGS:
        messages = MESSAGES.catalogue(lang).messages
        missing = [msgid for s in STAGES for msgid in (s.title_id, s.lesson_id) if msgid not in messages]
        assert not missing, f"{lang}.po lacks {missing}"


@pytest.mark.parametrize("argv", [["status"], [], ["check"], ["hint"], ["watch"]],
                         ids=["status", "kata alone", "check", "hint", "watch"])
@pytest.mark.parametrize("field", ["title_id", "lesson_id"])
def test_a_stage_whose_id_is_missing_is_one_line_that_names_it(monkeypatch, capsys, argv, field):
    """An added stage without its catalogue entries: `kata status` (and `kata`) say which
    id to add where, with exit 1, instead of dying with a traceback."""
    from dataclasses import replace

    from autograd_kata import cli
    from autograd_kata.core import i18n, manifest

    nine = replace(STAGES[-1], number=len(STAGES) + 1, slug="momentum", role="",
                   **{field: f"{field.split('_')[0]}.stage{len(STAGES) + 1}"})
    monkeypatch.setattr(manifest, "STAGES", (*STAGES, nine))
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("KATA_LANG", "en")
    i18n.reset()
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    missing = getattr(nine, field)
    assert err == (f"kata: stage {nine.number} names the message {missing} ({field} in "
                   f"autograd_kata/core/manifest.py), and the catalogue has no such message: add an entry "
                   f"`msgid \"{missing}\"` to autograd_kata/locales/{{en,ja}}/stage{nine.number:02d}.po (the "
                   f"recipe: docs/maintainers.md, \"Adding a stage\").\n")


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


# --- README.ja.md is README.md's learner part, in Japanese ----------------------------------

def learner_part(name: str) -> str:
    """A README up to its instructors' and maintainers' sections (which stay English only)."""
    from autograd_kata.core.student_copy import README_DROPPED
    lines = (ROOT / name).read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if README_DROPPED.match(line)), len(lines))
    return "".join(lines[:cut])


def skeleton(text: str) -> dict:
    """What two translations of one README share: the heading levels, the code blocks, the
    commands in backticks, the pictures, the maintainers' blocks and the reference-only lines."""
    text = re.sub(r"\s+", lambda space: "\n" if "\n\n" in space.group(0) else " ", text)  # wrapping aside
    text = re.sub(r"```.*?```", lambda block: block.group(0).replace(" ", "\0"), text, flags=re.S)
    return {
        "headings": [len(m.group(1)) for m in re.finditer(r"^(#+) ", text, re.M)],
        "code blocks": re.findall(r"```.*?```", text, re.S),
        "commands": sorted(set(re.findall(r"`((?:kata|pytest|python|sudo|brew|export)\b[^`]*)`", text))),
        "pictures": re.findall(r"!\[[^\]]*\]\(([^)]*)\)", text),
        "maintainers blocks": len(re.findall(r"<!--\s*maintainers\s*-->", text)),
        "reference lines": len(re.findall(r"<!--\s*reference-line\s*-->", text)),
    }


@pytest.mark.parametrize("copy", ["clone", "student"])
def test_the_japanese_readme_has_the_english_ones_sections_and_commands(copy):
    from autograd_kata.core.student_copy import student_readme
    english, japanese = learner_part("README.md"), (ROOT / "README.ja.md").read_text(encoding="utf-8")
    if copy == "student":
        english, japanese = student_readme(english), student_readme(japanese)
    want, got = skeleton(english), skeleton(japanese)
    assert len(want["headings"]) >= 6 and len(want["commands"]) >= 20, "the reading of README.md broke"
    for part in want:
        if part in ("headings", "maintainers blocks", "reference lines"):
            said = f"README.ja.md has {got[part]}, README.md {want[part]}"
        else:
            said = (f"only in README.md {[x for x in want[part] if x not in got[part]]}, "
                    f"only in README.ja.md {[x for x in got[part] if x not in want[part]]}")
        assert got[part] == want[part], f"README.ja.md's {part} differ from README.md's: {said}"


def test_each_readme_links_to_the_other_near_its_top():
    for name, other in (("README.md", "README.ja.md"), ("README.ja.md", "README.md")):
        top = "\n".join((ROOT / name).read_text(encoding="utf-8").splitlines()[:5])
        assert f"]({other})" in top, f"{name} has no link to {other} in its first lines"


def test_the_japanese_readme_is_shipped_to_learners_like_the_english_one():
    from autograd_kata.core.manifest import READMES, student_role
    assert [student_role(name) for name in READMES] == ["template", "template"]
    assert "README.ja.md" in (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
