"""The contract of the extended probe families as executable checks (used by the tests).

Every probe flip is the caption with its recorded region replaced: ``text == caption[:start] +
replacement + caption[end:]``, up to an a/an change right before the region (not for scrambles,
which fix no article). On top of that:
- relation and scrambles keep the bag of words (case-insensitive); binding keeps it up to number: an
  attribute swap exactly, a count swap with the counted nouns and their verbs in the other number and
  "a" and "an" one word (:func:`changed_only_in_number`);
- hard_relation replaces one relation word (a verb or a preposition phrase of ``relation_senses``) by
  another of a relation clique it shares;
- negation adds exactly one "not" (or, in an existential, one "no" in place of an article, number
  or quantifier) and otherwise only "that is/are" and an a/an change;
- spatial/temporal replace one listed unit by its listed opposite.
Syntactic paraphrases differ from the caption and carry no span.
"""
from __future__ import annotations

from collections import Counter

from lgip_dataset.perturb.agreement import noun_for_number, verb_for_number
from lgip_dataset.perturb.families.negation import EXISTENTIAL_QUANTIFIERS
from lgip_dataset.perturb.invariants import _lexicon_number_pairs, flip_problems
from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.probe_lexicon import load_probe_lexicon
from lgip_dataset.perturb.relations import contradicting, relation_words
from lgip_dataset.perturb.select import text_key
from lgip_dataset.perturb.text import WORD_RE
from lgip_dataset.perturb.variant import PerturbResult, Variant

SAME_BAG = frozenset(("relation", "scramble_content", "scramble_function", "scramble_all"))
NEGATION_WORDS = frozenset(("not", "no", "that", "is", "are", "a", "an"))
# "there are two dogs" -> "there are no dogs": "no" takes the place of an article, number or quantifier
EXISTENTIAL_REMOVED = frozenset(("a", "an", *load_lexicon().numbers, *EXISTENTIAL_QUANTIFIERS))


def bag(text: str) -> Counter:
    """The words of ``text``, lower-cased, with their counts."""
    return Counter(w.lower() for w in WORD_RE.findall(text))


def _number_forms(word: str) -> set[str]:
    """``word`` and its forms in the other number: as a lexicon noun ("person", "people"), another noun
    ("bench", "benches") or a present-tense verb ("is", "are"); "a" and "an" are one word."""
    if word in ("a", "an"):
        return {"a", "an"}
    forms = {word, noun_for_number(word, True), noun_for_number(word, False), verb_for_number(word, True),
             verb_for_number(word, False)}
    forms |= {w for pair in _lexicon_number_pairs() if word in pair for w in pair}
    return forms - {None}


def changed_only_in_number(caption: str, text: str) -> bool:
    """True when ``text`` has the words of ``caption`` up to number: each word it adds stands for one it
    removes in the other number ("Two dogs and a cat are" -> "A dog and two cats are")."""
    removed, added = bag(caption) - bag(text), bag(text) - bag(caption)
    for word in added.elements():
        match = next((w for w in removed.elements() if w in _number_forms(word)), None)
        if match is None:
            return False
        removed[match] -= 1
        removed += Counter()  # drop the emptied entries
    return not removed


def _relation_replaced(v: Variant) -> bool:
    """True when a hard_relation flip replaces a relation word by one that shares a clique with it."""
    words = relation_words()
    def sense(text: str) -> str | None:
        low = text.lower()
        return words.preposition_sense.get(tuple(low.split())) or words.verb_forms.get(low) \
            or (low if low.endswith("ing") else None)
    old, new = sense(v.original), sense(v.replacement)
    return old is not None and new is not None and new in contradicting(old)


def probe_problems(caption: str, v: Variant) -> list[str]:
    """Ways in which the probe variant ``v`` breaks its family's contract for ``caption``."""
    if v.kind == "paraphrase":
        ok = v.span is None and v.original is None and text_key(v.text) != text_key(caption)
        return [] if ok else [f"not a syntactic paraphrase of the caption: {v}"]
    if v.type.startswith("scramble_"):
        problems = [] if caption[:v.span[0]] + v.replacement + caption[v.span[1]:] == v.text else \
            ["text is not the caption with only the region replaced"]
        if text_key(v.text) == text_key(caption) or caption[v.span[0]:v.span[1]] != v.original:
            problems.append("scramble equals the caption or its span is wrong")
    else:
        problems = flip_problems(caption, v)
    if v.type in SAME_BAG and bag(v.text) != bag(caption):
        problems.append("bag of words changed")
    if v.type == "binding" and not changed_only_in_number(caption, v.text):
        problems.append("bag of words changed beyond number")
    if v.type == "hard_relation" and not _relation_replaced(v):
        problems.append(f"{v.original!r} -> {v.replacement!r} is no relation of a clique they share")
    if v.type == "negation":
        added, removed = bag(v.text) - bag(caption), bag(caption) - bag(v.text)
        if added["not"] + added["no"] != 1 or set(added) - NEGATION_WORDS or set(removed) - EXISTENTIAL_REMOVED:
            problems.append(f"not exactly one negation: +{dict(added)} -{dict(removed)}")
    if v.type in ("spatial", "temporal"):
        table = load_probe_lexicon().opposites[v.type]
        if table.get(tuple(v.original.lower().split())) != tuple(v.replacement.lower().split()):
            problems.append(f"{v.original!r} -> {v.replacement!r} is not a listed opposite")
    return problems


def probe_result_problems(result: PerturbResult, core: frozenset[str]) -> list[str]:
    """Every broken contract among the variants of families outside ``core``."""
    return [f"{v.type}: {p}" for v in result.paraphrases + result.flips if v.type not in core
            for p in probe_problems(result.caption, v)]
