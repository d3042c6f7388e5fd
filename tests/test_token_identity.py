"""A tokenizer's digest says everything its ids depend on: equal tables give one digest (read back from the
last ones digested), any changed entry another."""
from __future__ import annotations

import copy

import pytest
from open_clip.tokenizer import SimpleTokenizer

from lgip_metric.models import token_identity
from lgip_metric.models.token_identity import tokenizer_digest


@pytest.fixture()
def fresh(monkeypatch):
    monkeypatch.setattr(token_identity, "_SEEN", [])
    return token_identity


def test_equal_tables_give_one_digest_read_back_for_the_second_tokenizer(fresh, monkeypatch):
    first = tokenizer_digest(SimpleTokenizer())
    serialised = []
    real = fresh.json.dumps
    monkeypatch.setattr(fresh.json, "dumps", lambda value, **kw: serialised.append(value) or real(value, **kw))
    assert tokenizer_digest(SimpleTokenizer()) == first
    assert all("encoder" not in value for value in serialised)  # the vocabulary was compared, not serialised again
    fresh._SEEN.clear()
    assert tokenizer_digest(SimpleTokenizer()) == first  # the same digest computed afresh


@pytest.mark.parametrize("change", ["vocabulary", "merge", "special", "context"])
def test_any_changed_entry_gives_another_digest(fresh, change):
    base = SimpleTokenizer()
    plain = tokenizer_digest(base)
    other = copy.deepcopy(base)
    if change == "vocabulary":
        word = next(iter(other.encoder))
        other.encoder[word] = other.encoder[word] + 1
    elif change == "merge":
        pair = next(iter(other.bpe_ranks))
        other.bpe_ranks[pair] = len(other.bpe_ranks) + 7
    elif change == "special":
        other.eot_token_id += 1
    else:
        other.context_length = 64
    changed = tokenizer_digest(other)
    assert changed != plain
    fresh._SEEN.clear()
    assert tokenizer_digest(other) == changed and tokenizer_digest(base) == plain  # not the memo's doing


def test_the_memo_keeps_the_last_few_vocabularies(fresh):
    tokenizers = [SimpleTokenizer() for _ in range(fresh.SEEN_KEPT + 2)]
    for i, tokenizer in enumerate(tokenizers):
        tokenizer.encoder[f"extra-{i}"] = 10**6 + i
        tokenizer_digest(tokenizer)
    assert len(fresh._SEEN) == fresh.SEEN_KEPT
