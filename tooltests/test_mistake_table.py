"""The one table of classic mistakes (``core/mistakes.py``), checked as a table.

Each row (stage, the phrase its failure says, the id of its label) is written
once; the maintainers' catalogue (``maintainer/mistakes.py``) makes each mistake
in code and names its row by id, reading its stage and phrase from the table.
So what used to be kept in step by comparing two lists is checked here instead:
every row is a stage's, unique, labelled in every language, and made by at least
one breaking implementation, and every implementation names a row (that its
``old`` text is found in the reference and its phrase printed is test_mistakes').
"""
from __future__ import annotations

from collections import Counter

import pytest

from autograd_kata.core.i18n import MESSAGES, languages
from autograd_kata.core.manifest import STAGES
from autograd_kata.core.mistakes import PHRASES, label, label_id, named
from autograd_kata.core.operations import rules
from autograd_kata.maintainer.mistakes import MISTAKES


def test_each_row_is_one_mistake_of_a_stage():
    ids = Counter(i for _, _, i in PHRASES)
    assert not [i for i, n in ids.items() if n > 1], f"ids used twice: {sorted(i for i, n in ids.items() if n > 1)}"
    rows = Counter((s, p) for s, p, _ in PHRASES)
    assert not [r for r, n in rows.items() if n > 1], f"a stage's phrase twice: {[r for r, n in rows.items() if n > 1]}"
    numbers = {s.number for s in STAGES}
    assert not [i for s, _, i in PHRASES if s not in numbers], "rows of a stage the manifest does not have"
    assert all(p.strip() for _, p, _ in PHRASES), "a row with no phrase names nothing"


def test_a_rule_without_a_label_of_its_own_shares_the_rules_label():
    """An operation added to the table gets its 'assigns' mistake labelled with no catalogue edit."""
    assert label_id("tanh-assigns") == ("mistake.rule-assigns", {"op": "tanh"})
    assert label_id("add-assigns") == ("mistake.add-assigns", {})  # one that says more keeps its own
    assert label_id("no-reverse") == ("mistake.no-reverse", {})
    assert label(6, "the tanh rule assigns (=) instead of adding (+=)", "ja") == "tanh の規則で代入（=）している"


@pytest.mark.parametrize("lang", languages())
def test_every_row_has_its_label_in_every_language(lang):
    have = MESSAGES.catalogue(lang).messages
    missing = sorted({label_id(i)[0] for _, _, i in PHRASES} - set(have))
    assert not missing, f"locales/{lang}.po has no label for {missing} (add them beside the other mistake.* ids)"


def test_every_row_is_made_by_a_breaking_implementation():
    made = {m.named for m in MISTAKES}
    alone = [i for _, _, i in PHRASES if i not in made]
    assert not alone, (f"rows of core/mistakes.py that no Mistake of maintainer/mistakes.py makes: {alone}; "
                       "test_mistakes can only prove a phrase it has seen printed")


def test_every_implementation_names_a_row():
    unknown = []
    for m in MISTAKES:
        try:
            named(m.named)
        except LookupError as error:
            unknown.append(f"{m.id}: {error}")
    assert not unknown, "\n".join(unknown)
    ids = Counter(m.id for m in MISTAKES)
    assert not [i for i, n in ids.items() if n > 1], "a Mistake id twice"


def test_every_rule_of_the_operations_table_has_its_row():
    rows = {i: (s, p) for s, p, i in PHRASES}
    for op in rules():
        assert rows.get(f"{op.name}-assigns") == (6, f"the {op.name} rule assigns (=) instead of adding (+=)"), op.name


def test_a_row_that_no_one_makes_or_an_unknown_id_is_named():
    with pytest.raises(LookupError, match="no mistakes with the id 'no-such-mistake'"):
        named("no-such-mistake")
    ident = PHRASES[0][2]
    assert named(ident) == PHRASES[0][:2]
