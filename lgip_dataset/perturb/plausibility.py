"""How well a word fits a caption's context, learnt from COCO captions and cross-fitted by image.

Plain counts (so the counts of disjoint caption sets add up):

* **head–argument co-occurrence**: for every *target* of a caption (an object noun, keyed by its
  lexicon group ``n:<group>``; a place of :mod:`lgip_dataset.perturb.places`, ``p:<group>``; a
  colour word in colour use, ``c:<colour group>``; a number word used as a count, ``k:<word>``) the
  caption's *context words* around it (:func:`context_words`: up to two content words on each side
  of a noun or a place and the preposition before it; the modified noun for a colour, the counted
  noun for a number; nouns are keyed by group, so "dog" and "dogs" are one word; each key says its
  side). A replacement *fits* a
  context word in the slot of an original (:meth:`Plausibility.fits`) when the pair was seen at
  least ``MIN_COOCCURRENCE`` times and, relative to each target's own frequency, at least
  ``MIN_RATIO`` times as often as with the original ("grazing" takes "n:cow" about as often as
  "n:sheep", not "n:knife"; "hanging on" takes "n:banana" far less often than "n:tree";
  "c:purple" is not attested with "n:horse"). A noun or a place is asked only about its
  *informative* context words (:meth:`Plausibility.informative`): its preposition, and the words
  seen with the original itself.
* **caption typicality** (:meth:`Plausibility.typicality`): every content word of the caption,
  wherever it stands (key side ``*``), counted with each target, so that a word far from the slot
  still speaks ("a baseball catcher ... ready to catch a frisbee", "riding a wave on top of a
  skateboard"): how much more or less typical the rest of the caption is of the replacement than
  of the original (the counts a caption says without a number word are targets here too,
  :func:`count_classes`: ``k:one`` for "a dog", ``k:many`` for "dogs"); and whether the replacement was ever seen with each of the caption's other
  nouns and places (:meth:`Plausibility.scene_attested`: a horse is never seen with a stove).
* **relations** (:meth:`Plausibility.relation_count`): how often a subject noun is related to an
  object by a verb or a preposition (:func:`lgip_dataset.perturb.relations.counted_relations`: "a man
  riding a horse", "a cat under a car"), which the extended families ask before they replace a
  relation, swap its roles or flip it into its opposite; and how often an attribute modifies a noun
  (:meth:`Plausibility.attribute_count`: "a wooden bench", "a green field"), which attribute swaps ask.
* a **Kneser–Ney bigram** (:class:`lgip_dataset.ngram.BigramKN`, the blind LM's model) of the
  captions, which says how much more or less likely the flipped caption reads than the original; and a
  **Kneser–Ney trigram** (:class:`lgip_dataset.ngram.TrigramKN`) of them, whose preference the hard set's
  choice balances as well: it reads the colour–noun and count–noun typicality of "a white sink" beside
  its article, which the bigram reads only pairwise.

**Cross-fitting**: captions fall in ``FOLDS`` folds by a stable hash of their image id (the blind
LM's folds, :func:`lgip_dataset.ngram.image_fold`); the flips of a caption are chosen with the
statistics of the *other* folds only (:meth:`FoldedCounts.for_image`), so no caption's own image,
nor any other caption of it, contributes to the choice of its flips. The build adds its own
captions to the shipped table (``lexicons/plausibility_counts.json.gz``, derived by
``builders/derive_plausibility_counts.py`` from COCO captions of images outside the build's
source, folded the same way), so a small build (the 50-image sample) still has statistics.
"""
from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources

from tqdm.auto import tqdm

from lgip_dataset.ngram import FOLDS, BigramKN, TrigramKN, image_fold, image_half, sentence_bigrams, sentence_trigrams
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.lexicon import Lexicon, load_lexicon
from lgip_dataset.perturb.places import load_places, place_sites, preposition_before
from lgip_dataset.perturb.senses import is_color_use, is_count_use, is_object_noun
from lgip_dataset.perturb.relations import counted_attributes, counted_relations

MIN_COOCCURRENCE = 2
MIN_SCENE = 1  # least captions that show a replacement with each other noun of the caption
MIN_RATIO = 0.1  # a replacement's share of a context word, against the original's share
SMOOTHING = 0.5  # added to every caption-word count of a target (typicality)
COUNTS_FILE = "plausibility_counts.json.gz"
COUNTS_VERSION = "1.9.0"
_MEMO_KEY = "plausibility"


def _word_key(ctx: CaptionContext, i: int) -> str:
    """A context word's key: ``n:<group>`` for an object noun's first token, else the lower-case word."""
    unit = ctx.units.get(i)
    return f"n:{unit.form.group}" if unit is not None and unit.form is not None else ctx.tokens[i].low


def _content(ctx: CaptionContext, i: int) -> bool:
    tok = ctx.tokens[i]
    return ctx.is_content(tok) and tok.low.isalpha() and tok.low not in ctx.lex.color_group


def context_words(ctx: CaptionContext, first: int, end: int, target: str) -> tuple[str, ...]:
    """Keys of the context words of the target at tokens ``first..end-1`` of kind ``target[0]``:
    ``n`` (a noun) and ``p`` (a place) up to two content words each side within four tokens and the
    preposition the target follows (``<@on``: "on the beach" but "in the field", "sitting on a
    horse" but not on a dog), ``c`` and ``k`` the first content word after it (the modified or
    counted noun) within three tokens. Keys start with ``<`` (before
    the target) or ``>`` (after it): "a man riding a horse" gives "horse" ``<riding``, not "man"."""
    unit_end = {u.start: u.end for u in ctx.units.values()}
    starts = {}  # token -> first token of its unit, so a multiword noun is one context word
    for s, e in unit_end.items():
        starts.update({k: s for k in range(s, e)})

    def scan(indices, limit, side):
        found, seen = [], set()
        for k in indices:
            k0 = starts.get(k, k)
            if k0 in seen or first <= k0 < end:
                continue
            if _content(ctx, k0):
                seen.add(k0)
                found.append(side + _word_key(ctx, k0))
                if len(found) == limit:
                    break
        return found

    if target in ("n", "p"):
        words = tuple(scan(range(first - 1, max(first - 5, -1), -1), 2, "<")
                      + scan(range(end, min(end + 4, len(ctx.tokens))), 2, ">"))
        prep = preposition_before(ctx, first)
        return words + ((f"<@{prep}",) if prep else ())
    return tuple(scan(range(end, min(end + 3, len(ctx.tokens))), 1, ">"))


def modifying_colours(ctx: CaptionContext, first: int) -> tuple[str, ...]:
    """Keys of the colours that modify the noun or place at token ``first`` ("a green field",
    "a black and white dog"), each counted with it as a colour's context word."""
    lex, key = ctx.lex, ">" + _word_key(ctx, first)
    return tuple(f"c:{lex.color_group[ctx.tokens[i].low]}" for i in range(max(first - 3, 0), first)
                 if ctx.tokens[i].low in lex.color_group and is_color_use(ctx, i)
                 and context_words(ctx, i, i + 1, "c") == (key,))


def caption_words(ctx: CaptionContext, first: int, end: int) -> tuple[str, ...]:
    """Keys (side ``*``) of the caption's distinct content words outside tokens ``first..end-1``."""
    inner = {k for u in ctx.units.values() for k in range(u.start + 1, u.end)}  # a multiword noun is one word
    words = dict.fromkeys("*" + _word_key(ctx, k) for k in range(len(ctx.tokens))
                          if not first <= k < end and k not in inner and _content(ctx, k))
    return tuple(words)


@lru_cache(maxsize=1)
def _place_word_keys() -> frozenset[str]:
    """Caption-word keys of the one-word places."""
    return frozenset("*" + w[0] for w in load_places().group_of if len(w) == 1)


def scene_nouns(words: tuple[str, ...]) -> tuple[str, ...]:
    """The nouns and places among caption-word keys (:func:`caption_words`)."""
    places = _place_word_keys()
    return tuple(w for w in words if w.startswith("*n:") or w in places)


def targets(ctx: CaptionContext) -> list[tuple[str, int, int]]:
    """(key, first token, end token) of every object noun, colour and count of the caption."""
    lex = ctx.lex
    found = [(f"n:{u.form.group}", u.start, u.end) for u in ctx.units.values() if is_object_noun(ctx, u)]
    found += [(f"p:{site.group}", site.first, site.end) for site in place_sites(ctx)]
    for i, tok in enumerate(ctx.tokens):
        if tok.low in lex.color_group and is_color_use(ctx, i):
            found.append((f"c:{lex.color_group[tok.low]}", i, i + 1))
        elif tok.low in lex.numbers and is_count_use(ctx, i):
            found.append((f"k:{tok.low}", i, i + 1))
    return found


def count_classes(ctx: CaptionContext) -> list[tuple[str, int, int]]:
    """(key, first token, end token) of the counts a caption says without a number word, as the hard count flips key
    them (``hard._count_key``): ``k:one`` for an object noun right after "a"/"an" ("a dog", the article included),
    ``k:many`` for a plural one that no number word counts ("dogs", "several dogs"). Counted with the caption's
    words only (side ``*``, :meth:`Plausibility.typicality`), so that a flip between an article and a number or a
    bare plural reads how typical the rest of the caption is of each count; a number word is a target already."""
    from lgip_dataset.perturb.senses import noun_number

    found = []
    for unit in ctx.units.values():
        if not is_object_noun(ctx, unit) or ctx.lex.groups[unit.form.group].uncountable:
            continue
        prev = ctx.prev_word(unit.start)
        if prev is not None and prev.low in ("a", "an") and ctx.joined(unit.start - 1, unit.start):
            found.append(("k:one", unit.start - 1, unit.end))
        elif noun_number(ctx, unit) == "plural" and not any(
                ctx.tokens[k].low in ctx.lex.numbers for k in range(max(unit.start - 3, 0), unit.start)):
            found.append(("k:many", unit.start, unit.end))
    return found


@dataclass
class Counts:
    """Additive count tables of a set of captions: caption bigrams and trigrams, target–context pairs and relations."""
    bigrams: Counter = field(default_factory=Counter)  # (v, w) as in lgip_dataset.ngram
    pairs: Counter = field(default_factory=Counter)  # (target key, context key)
    relations: Counter = field(default_factory=Counter)  # (subject, relation, object) (relations.counted_relations)
    attributes: Counter = field(default_factory=Counter)  # (attribute sense, noun) (relations.counted_attributes)
    trigrams: Counter = field(default_factory=Counter)  # (half, u, v, w): (u, v, w) as in lgip_dataset.ngram

    def add(self, caption: str, lex: Lexicon, outside: bool = True, half: int = 0) -> None:
        """Count one caption; its trigrams, in its image's ``half`` (:func:`lgip_dataset.ngram.image_half`), only when
        it is ``outside`` the build (:func:`count_captions`)."""
        self.bigrams.update(sentence_bigrams(caption))
        if outside:
            self.trigrams.update((half, *t) for t in sentence_trigrams(caption))
        ctx = CaptionContext(caption, lex)
        for key, first, end in targets(ctx):
            self.pairs.update((key, w) for w in context_words(ctx, first, end, key[0]))
            self.pairs.update((key, w) for w in caption_words(ctx, first, end))
        for key, first, end in count_classes(ctx):
            self.pairs.update((key, w) for w in caption_words(ctx, first, end))
        self.relations.update(counted_relations(ctx))
        self.attributes.update(counted_attributes(ctx))

    def __iadd__(self, other: "Counts") -> "Counts":
        self.bigrams.update(other.bigrams)
        self.pairs.update(other.pairs)
        self.relations.update(other.relations)
        self.attributes.update(other.attributes)
        self.trigrams.update(other.trigrams)
        return self

    def to_json(self) -> dict:
        return {"bigrams": {f"{v} {w}": n for (v, w), n in sorted(self.bigrams.items())},
                "pairs": {f"{t}\t{w}": n for (t, w), n in sorted(self.pairs.items())},
                "relations": {"\t".join(k): n for k, n in sorted(self.relations.items())},
                "attributes": {"\t".join(k): n for k, n in sorted(self.attributes.items())},
                "trigrams": {" ".join(map(str, k)): n for k, n in sorted(self.trigrams.items())}}

    @classmethod
    def from_json(cls, data: dict) -> "Counts":
        return cls(Counter({tuple(k.split(" ")): n for k, n in data["bigrams"].items()}),
                   Counter({tuple(k.split("\t")): n for k, n in data["pairs"].items()}),
                   Counter({tuple(k.split("\t")): n for k, n in data["relations"].items()}),
                   Counter({tuple(k.split("\t")): n for k, n in data["attributes"].items()}),
                   Counter({(int(k[0]), *k[2:].split(" ")): n for k, n in data["trigrams"].items()}))


class Plausibility:
    """Context fit and LM score of flips, from one set of counts (the other folds')."""

    def __init__(self, counts: Counts):
        self.counts = counts

    @cached_property
    def lm(self) -> BigramKN:
        return BigramKN().fit_counts(self.counts.bigrams)

    @cached_property
    def trigram(self) -> TrigramKN:
        return self._trigram_of((0, 1))

    @cached_property
    def trigram_halves(self) -> tuple[TrigramKN, TrigramKN]:
        """The trigram LMs of each half of the captions (:func:`lgip_dataset.ngram.image_half`): two independent
        readings, whose agreement over a set's candidates says how far to trust one."""
        return self._trigram_of((0,)), self._trigram_of((1,))

    def _trigram_of(self, halves: tuple[int, ...]) -> TrigramKN:
        counts = Counter()
        for (half, *trigram), n in self.counts.trigrams.items():
            if half in halves:
                counts[tuple(trigram)] += n
        return TrigramKN().fit_counts(counts)

    @cached_property
    def _target_totals(self) -> Counter:
        """Words counted per target and side: (target, "<"), (target, ">"), (target, "*")."""
        totals = Counter()
        for (target, word), n in self.counts.pairs.items():
            totals[(target, word[0])] += n
        return totals

    @cached_property
    def _caption_vocabulary(self) -> int:
        return len({w for _, w in self.counts.pairs if w[0] == "*"}) + 1

    def typicality(self, target: str, original: str, words: tuple[str, ...]) -> float:
        """sum over ``words`` (caption words, :func:`caption_words`) of log P(w | target) - log P(w |
        original), each smoothed by SMOOTHING: below 0 where the caption reads less typical of the
        replacement than of the original ("catcher" with "frisbee" for "ball")."""
        pairs, totals, size = self.counts.pairs, self._target_totals, self._caption_vocabulary

        def logp(t: str, w: str) -> float:
            return math.log((pairs[(t, w)] + SMOOTHING) / (totals[(t, "*")] + SMOOTHING * size))
        return sum(logp(target, w) - logp(original, w) for w in words)

    def scene_attested(self, target: str, nouns: tuple[str, ...]) -> bool:
        """True when every one of ``nouns`` (caption-word keys of the caption's other nouns and
        places) was seen in a caption with ``target`` at least MIN_SCENE times: "horse" is never
        seen with "stove", nor "zebra" with "harbor"."""
        return all(self.counts.pairs[(target, w)] >= MIN_SCENE for w in nouns)

    def informative(self, original: str, context: tuple[str, ...]) -> tuple[str, ...]:
        """The words of a noun's or a place's ``context`` (:func:`context_words`) that say what its
        slot takes: the preposition before it ("sitting on a horse", never "on a dog"), and each
        content word seen with ``original`` at least MIN_COOCCURRENCE times. A word the statistics
        never or once saw with the original itself ("curled up on a couch", "a caged bird") tells
        nothing about its slot, and asking the replacement to be attested with it only rejects
        sound flips ("curled up on a bed")."""
        return tuple(w for w in context if w[1] == "@" or self.counts.pairs[(original, w)] >= MIN_COOCCURRENCE)

    def colours_attested(self, target: str, colours: tuple[str, ...]) -> bool:
        """True when each of ``colours`` (:func:`modifying_colours`) was seen modifying ``target`` (a
        noun or place key) at least MIN_COOCCURRENCE times: "a green field" may become "a green
        park", never "a green beach"; "a brown horse" never "a brown zebra"."""
        word = ">" + (target if target.startswith("n:") else target[2:].split()[0])  # a place by its first word
        return all(self.counts.pairs[(colour, word)] >= MIN_COOCCURRENCE for colour in colours)

    def fits(self, target: str, original: str, word: str) -> bool:
        """True when the context word ``word`` of ``original`` takes ``target`` too: the pair seen at
        least MIN_COOCCURRENCE times, and P(word | target) >= MIN_RATIO * P(word | original)."""
        pairs, totals, side = self.counts.pairs, self._target_totals, word[0]
        seen = pairs[(target, word)]
        if seen < MIN_COOCCURRENCE:
            return False
        usual = pairs[(original, word)] / totals[(original, side)] if totals[(original, side)] else 0.0
        return seen / totals[(target, side)] >= MIN_RATIO * usual

    def context_fit(self, target: str, original: str, context: tuple[str, ...]) -> float:
        """Share of ``context`` that takes ``target`` in ``original``'s slot (:meth:`fits`); 1.0 for no context."""
        if not context:
            return 1.0
        return sum(self.fits(target, original, w) for w in context) / len(context)

    def relation_count(self, subject: str, relation: str, obj: str) -> int:
        """Captions (of the counted folds) that relate ``subject`` to ``obj`` by ``relation``
        (:func:`lgip_dataset.perturb.relations.counted_relations`; ``obj`` "*": to anything)."""
        return self.counts.relations[(subject, relation, obj)]

    def attribute_count(self, sense: str, noun: str) -> int:
        """Captions (of the counted folds) in which the attribute ``sense`` modifies ``noun``
        (:func:`lgip_dataset.perturb.relations.counted_attributes`: "green" "field", never "green" "n:stop sign")."""
        return self.counts.attributes[(sense, noun)]

    def lm_delta(self, caption: str, variant: str) -> float:
        """log P(variant) - log P(caption) under the bigram LM (> 0: the flip reads more likely)."""
        return self.lm.logprob(variant) - self.lm.logprob(caption)

    def trigram_delta(self, caption: str, variant: str) -> float:
        """log P(variant) - log P(caption) under the trigram LM (> 0: the flip reads more likely), which the hard
        set's choice balances (:mod:`lgip_dataset.selection.balance_program`)."""
        return self.trigram.logprob(variant) - self.trigram.logprob(caption)

    def trigram_readings(self, caption: str, variants: list[str]) -> list[tuple[float, list[float]]]:
        """Per variant, its :meth:`trigram_delta` and the same delta under each half's trigram LM
        (:attr:`trigram_halves`), rounded to 1e-6; the caption is read once, not once per variant."""
        models = (self.trigram, *self.trigram_halves)
        base = [lm.logprob(caption) for lm in models]
        readings = []
        for variant in variants:
            delta = [round(lm.logprob(variant) - b, 6) for lm, b in zip(models, base)]
            readings.append((delta[0], delta[1:]))
        return readings


class FoldedCounts:
    """Counts per image fold; :meth:`for_image` gives the statistics of the other folds."""

    def __init__(self, folds: list[Counts] | None = None):
        self.folds = folds if folds is not None else [Counts() for _ in range(FOLDS)]
        self._scorers: dict[int, Plausibility] = {}

    def add(self, image_id, caption: str, lex: Lexicon) -> None:
        """Count ``caption`` of image ``image_id`` into its fold."""
        self.folds[image_fold(image_id)].add(caption, lex)
        self._scorers.clear()

    def __iadd__(self, other: "FoldedCounts") -> "FoldedCounts":
        for mine, theirs in zip(self.folds, other.folds):
            mine += theirs
        self._scorers.clear()
        return self

    def for_image(self, image_id) -> Plausibility:
        """The statistics of every fold but ``image_id``'s (None: of all folds, for a caption of no image)."""
        fold = -1 if image_id is None else image_fold(image_id)
        if fold not in self._scorers:
            total = Counts()
            for f, counts in enumerate(self.folds):
                if f != fold:
                    total += counts
            self._scorers[fold] = Plausibility(total)
        return self._scorers[fold]

    def to_json(self) -> dict:
        return {"version": COUNTS_VERSION, "folds": FOLDS, "min_cooccurrence": MIN_COOCCURRENCE,
                "counts": [c.to_json() for c in self.folds]}

    @classmethod
    def from_json(cls, data: dict) -> "FoldedCounts":
        if data.get("version") != COUNTS_VERSION or data.get("folds") != FOLDS:
            raise RuntimeError(f"{COUNTS_FILE} has version {data.get('version')!r} with {data.get('folds')} folds, "
                               f"expected {COUNTS_VERSION} with {FOLDS}; rerun builders/derive_plausibility_counts.py")
        return cls([Counts.from_json(c) for c in data["counts"]])


def count_captions(captions: Iterable[tuple], lex: Lexicon | None = None) -> FoldedCounts:
    """Folded counts of (image id, caption) pairs, or of (image id, caption, outside) triples: the trigram LM learns
    only captions ``outside`` the build (the shipped table's, ``--statistics-captions`` files'), never the build's
    own. A balanced choice removes every word it inserts from another of the build's captions, so an LM of the
    build's own captions reads its flips as likely (measured on val2017: the hard colour flips at 0.51 by a trigram
    of the build's other captions, 0.56 by one of captions outside it), and balancing against it would hide what
    an outside reader sees."""
    lex = lex or load_lexicon()
    folded = FoldedCounts()
    for image_id, caption, *outside in captions:
        folded.folds[image_fold(image_id)].add(caption, lex, *outside, half=image_half(image_id))
    return folded


def build_counts(captions: Iterable[tuple], progress: bool = False) -> FoldedCounts:
    """The hard families' statistics for a build: the shipped counts plus the build's own (image id, caption) pairs
    and the (image id, caption, True) triples of its ``--statistics-captions`` files, each in its image's fold (the
    build's own captions add no trigram: :func:`count_captions`)."""
    folded = shipped_counts()
    folded += count_captions((image_id, caption, bool(outside and outside[0])) for image_id, caption, *outside in
                             tqdm(captions, desc="plausibility counts", unit="caption", disable=not progress))
    return folded


def provenance() -> dict:
    """What the statistics are: folds, attestation threshold and the shipped table's source."""
    return {"folds": FOLDS, "fold_rule": "SHA-256 of the image id, modulo the folds (as the blind LM)",
            "min_cooccurrence": MIN_COOCCURRENCE, "min_ratio": MIN_RATIO, "min_scene": MIN_SCENE,
            "shipped_counts": COUNTS_FILE,
            "shipped_counts_version": COUNTS_VERSION, "shipped_source": _shipped_json()["source"],
            "build_counts": "the build's own captions and those of its --statistics-captions files (each image "
                            "once), added to their image's fold"}


@lru_cache(maxsize=1)
def _shipped_json() -> dict:
    data = resources.files("lgip_dataset.lexicons").joinpath(COUNTS_FILE).read_bytes()
    return json.loads(gzip.decompress(data))


def shipped_image_ids() -> frozenset:
    """The image ids whose captions the shipped table counts."""
    return frozenset(_shipped_json()["image_ids"])


def shipped_counts() -> FoldedCounts:
    """A fresh copy of the shipped folded counts (COCO captions, see the module docstring)."""
    return FoldedCounts.from_json(_shipped_json())


def attach(ctx: CaptionContext, scorer: Plausibility) -> None:
    """Give the hard families of this caption the statistics they may use."""
    ctx.memo[_MEMO_KEY] = scorer


def attached(ctx: CaptionContext) -> Plausibility:
    """The statistics attached to ``ctx``; the shipped counts of all folds when none were attached."""
    scorer = ctx.memo.get(_MEMO_KEY)
    if scorer is None:
        scorer = ctx.memo[_MEMO_KEY] = _default_scorer()
    return scorer


@lru_cache(maxsize=1)
def _default_scorer() -> Plausibility:
    return shipped_counts().for_image(None)
