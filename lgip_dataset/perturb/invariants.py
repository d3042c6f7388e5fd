"""The contract of a variant as executable checks (used by the tests; a builder may call them too).

Independent of how variants are generated: a flip must be the caption with exactly the span
replaced, plus at most an a/an change of the article right before it and, for counts, the
singular/plural change of the counted noun and of one verb that agrees with it (and of "there
is/are" before it).
"""
from __future__ import annotations

import re
from functools import lru_cache

from lgip_dataset.perturb.agreement import indefinite_article, noun_for_number, singular_of, verb_for_number
from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.select import text_key
from lgip_dataset.perturb.text import WORD_RE
from lgip_dataset.perturb.variant import PerturbResult, Variant

ARTICLE_BEFORE = re.compile(r"(?i)\b(an?)(\s+)$")
EXISTENTIAL_BEFORE = re.compile(r"(?i)\bthere\s+(is|are|was|were)(\s+)$")


@lru_cache(maxsize=256)
def _key(text: str) -> str:
    return text_key(text)


@lru_cache(maxsize=256)
def _words(text: str) -> str:
    """The words of ``text``, lower-cased, joined by single spaces and padded with one."""
    return " " + " ".join(WORD_RE.findall(text.lower())) + " "


@lru_cache(maxsize=1)
def _lexicon_number_pairs() -> frozenset[frozenset[str]]:
    """{last word of the singular, last word of the plural} of every lexicon noun ("man", "men")."""
    return frozenset(frozenset((f.singular.split()[-1], f.plural.split()[-1]))
                     for f in load_lexicon().noun_forms.values() if f is not None and f.singular != f.plural)


def _number_pair(a: str, b: str) -> bool:
    """True when a and b are the singular and plural of one noun (either order)."""
    a, b = a.lower(), b.lower()
    return a != b and (singular_of(a) == b or singular_of(b) == a or frozenset((a, b)) in _lexicon_number_pairs()
                       or b in (noun_for_number(a, True), noun_for_number(a, False)))


def _verb_pair(a: str, b: str) -> bool:
    """True when a and b are the singular and plural present forms of one verb ("is"/"are", "flies"/"fly")."""
    a, b = a.lower(), b.lower()
    return a != b and b in (verb_for_number(a, True), verb_for_number(a, False))


def _tail_ok(rest: str, after: str, allow_number: bool) -> bool:
    if rest == after:
        return True
    old, new = WORD_RE.split(after), WORD_RE.split(rest)
    old_w, new_w = WORD_RE.findall(after), WORD_RE.findall(rest)
    if not allow_number or old != new or len(old_w) != len(new_w):
        return False
    diff = [(a, b) for a, b in zip(old_w, new_w) if a != b]
    return len(diff) <= 2 and all(_number_pair(a, b) or _verb_pair(a, b) for a, b in diff)


def _counts(v: Variant) -> bool:
    """True for a count flip ("count", or another family's count type such as "hard_count")."""
    return v.type == "count" or v.type.endswith("_count")


def flip_problems(caption: str, v: Variant) -> list[str]:
    """Ways in which ``v`` breaks the flip contract for ``caption`` (empty when it holds)."""
    if v.kind != "flip" or None in (v.original, v.replacement, v.span):
        return [f"not a complete flip record: {v}"]
    s, e = v.span
    problems = []
    if not (0 <= s < e <= len(caption)) or caption[s:e] != v.original:
        return [f"span {v.span} does not hold original {v.original!r}"]
    if WORD_RE.fullmatch(caption[s:e].split()[0]) is None or (s and WORD_RE.match(caption[s - 1])) \
            or (e < len(caption) and WORD_RE.match(caption[e])):
        problems.append(f"span {v.span} is not on whole words")
    if v.original.lower() == v.replacement.lower():
        problems.append("replacement equals original")
    if text_key(v.text) == _key(caption):
        problems.append("text equals the caption")
    before, after = caption[:s], caption[e:]
    heads = [before]
    m = ARTICLE_BEFORE.search(before)
    if m:
        swapped = {"a": "an", "an": "a"}[m.group(1).lower()]
        heads += [before[:m.start(1)] + form + m.group(2) for form in (swapped, swapped.capitalize(), swapped.upper())]
    m = EXISTENTIAL_BEFORE.search(before)
    if m and _counts(v):  # "there are two dogs" -> "there is one dog"
        swapped = {"is": "are", "are": "is", "was": "were", "were": "was"}[m.group(1).lower()]
        heads += [before[:m.start(1)] + form + m.group(2) for form in (swapped, swapped.capitalize(), swapped.upper())]
    for head in heads:
        if v.text.startswith(head + v.replacement) and \
                _tail_ok(v.text[len(head) + len(v.replacement):], after, _counts(v)):
            m = ARTICLE_BEFORE.search(head)
            if m and m.group(1).lower() != indefinite_article(v.replacement):
                problems.append(f"article {m.group(1)!r} does not agree with {v.replacement!r}")
            return problems
    return problems + ["text is not the caption with only the span replaced (plus agreement)"]


def paraphrase_problems(caption: str, v: Variant) -> list[str]:
    """Ways in which ``v`` breaks the paraphrase contract for ``caption``."""
    problems = []
    if v.kind != "paraphrase" or (v.original, v.replacement, v.span) != (None, None, None):
        problems.append(f"not a paraphrase record: {v}")
    if text_key(v.text) == _key(caption):
        problems.append("paraphrase equals the caption")
    if _words(caption) not in _words(v.text):
        problems.append("caption words are not kept in order")
    if v.text != " ".join(v.text.split()):
        problems.append("whitespace not normalised")
    return problems


def result_problems(result: PerturbResult, k_same: int, k_diff: int) -> list[str]:
    """Every broken invariant of a whole result: caps, duplicates and each variant."""
    problems = []
    if len(result.paraphrases) > k_same or len(result.flips) > k_diff:
        problems.append("more variants than k")
    for probe_set in (False, True):  # the hard flips are a set of their own (they may repeat a paper flip)
        keys = [text_key(v.text) for v in result.paraphrases + result.flips if v.type.startswith("hard_") == probe_set]
        if len(set(keys)) != len(keys):
            problems.append("duplicate variants")
    for v in result.paraphrases:
        problems += paraphrase_problems(result.caption, v)
    for v in result.flips:
        problems += flip_problems(result.caption, v)
    return problems
