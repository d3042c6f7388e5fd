"""The a/an rule equals inflect's choice for every word the lexicons can insert."""
from __future__ import annotations

import inflect
import pytest

from lgip_dataset.perturb.agreement import indefinite_article, singular_of
from lgip_dataset.perturb.lexicon import load_lexicon


def _insertable_words() -> set[str]:
    lex = load_lexicon()
    words = set(lex.numbers) | set(lex.color_group)
    for group in lex.groups.values():
        words.update({group.singular, group.plural})
    return words


def test_article_rule_matches_inflect_on_every_lexicon_word():
    engine = inflect.engine()
    words = sorted(_insertable_words())
    assert len(words) > 150
    wrong = [w for w in words if indefinite_article(w) != engine.a(w.lower()).split(" ", 1)[0]]
    assert wrong == []


@pytest.mark.parametrize("phrase, article", [
    ("elephant", "an"), ("giraffe", "a"), ("umbrella", "an"), ("unicycle", "a"), ("hour", "an"),
    ("one", "a"), ("eight", "an"), ("8", "an"), ("80", "a"), ("11", "an"), ("orange cat", "an"), ("user", "a"),
])
def test_article_rule_known_cases(phrase, article):
    assert indefinite_article(phrase) == article


def test_singular_of_non_lexicon_nouns():
    assert singular_of("skiers") == "skier"
    assert singular_of("skier") is None
    assert singular_of("x2s") is None
