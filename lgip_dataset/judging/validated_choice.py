"""The validated config's compositional flips, chosen across the build so that text alone cannot tell them.

Judges keep the valid flips of ``hard_relation``, ``spatial`` and ``binding`` (:func:`~lgip_dataset.judging.validated`),
but valid is not free of text priors: an opposite or a swapped attribute often reads less usual than the caption, and
COCO says "in front of" far more often than "behind", so a spatial flip's direction alone gives it away. Of each of
these families' judged-valid flips, the validated config keeps those :func:`lgip_dataset.selection.balance.choose`
picks, each flip its own site, by :data:`RULES`: every word of the differences removed as often as inserted up to the
net count of a seeded fair coin per image (each direction of a change as frequent as its reverse), as many flips the
build's bigram and trigram LMs (the other statistics folds) find likelier than their caption as the reverse, and as many
whose changed words are more typical of the words both texts share than the caption's (context typicality,
:mod:`lgip_dataset.selection.context_typicality`, from the build's captions of the other statistics folds), each image
with a flip worth more than a flip, then adversarial rounds of word learners and of context learners (each changed word
paired with each word both texts share, :func:`lgip_dataset.selection.adversary.context_features`: which things go
together) on random image partitions of the build's stream, which drop the flips the learners pick out most surely. The
choice depends only on the valid flips, the build's statistics and its seed; every other row the validated rule keeps is
kept as it is.
"""
from __future__ import annotations

from collections import Counter

import numpy as np

from lgip_dataset import schema
from lgip_dataset.ngram import FOLDS, image_fold
from lgip_dataset.perturb.plausibility import FoldedCounts
from lgip_dataset.perturb.variant import Variant
from lgip_dataset.selection import balance
from lgip_dataset.selection.adversary import CONTEXT
from lgip_dataset.selection.context_typicality import Pairs

CHOSEN = ("hard_relation", "spatial", "binding")  # families whose judged-valid flips are chosen across the build
# Tuned on val2017 (dev draws of the choice at seeds 0-2, every held-out instrument of the three families within
# 0.45-0.57). Word and context learners in the adversarial rounds (with word learners alone, hard_relation's valid
# flips read 0.61 to a held-out context learner and 0.62 to context typicality), context typicality held at 0, a
# trigram offset measured from 300 candidates (binding's 449 valid flips had none under 1,000 and read 0.60 to a
# held-out trigram LM). Unlike the hard set: no bigram cells, the cells' targets drawn jointly (one fair coin per
# image: a relation moves several words together) and no learner cost when a round chooses again; the hard set's
# exact bigram cells left binding's chosen flips at 0.45 to a held-out naive Bayes learner (0.42 at 47k), and the
# cost, which prefers the candidates the learners get wrong, pushed hard_relation's word learner to 0.44. And 16
# partitions per round, the AFLite way, where the hard set takes 3: a flip picked out on 3 partitions is often one
# whose folds fell its way, and dropping those left hard_relation at 0.47 to a fresh word learner (0.49 with 16)
RULES = balance.Rules(learners=("word", CONTEXT), typicality_offsets=dict.fromkeys(CHOSEN, 0.0), min_calibration=300,
                      joint_targets=CHOSEN, bigrams=False, learner_cost=0.0, draws=16)
FIGURES = ("flips", "learner_accuracy", "largest_word_imbalance", "lm_prefers_caption", "lm_prefers_flip",
           "trigram_prefers_caption", "trigram_prefers_flip", "typicality_prefers_caption", "typicality_prefers_flip",
           "trigram_offsets", "images_with_flip")  # recorded per family


def describe() -> str:
    """The rule, for the build's card."""
    return (f"the judged-valid flips of {', '.join(CHOSEN)} chosen per family across the build as the hard flips are "
            "(lgip_dataset.selection.balance: words of the differences removed as often as inserted up to a fair coin "
            "per image, the bigram and trigram LMs' and the context typicality's preferences balanced; adversarial "
            "rounds of word and context learners)")


def choose_validated(pairs: dict[str, list], keep: np.ndarray, statistics: FoldedCounts,
                     seed: int) -> tuple[np.ndarray, dict]:
    """``keep`` (indices of the ``pairs`` rows the validated rule keeps) less the judged-valid flips of :data:`CHOSEN`
    the balanced choice leaves out, and per family the valid flips, the chosen ones and the choice's figures (empty
    where the build has no such flip). ``statistics``: the build's folded caption statistics."""
    rows = [int(i) for i in keep if pairs["kind"][i] == schema.FLIP and pairs["type"][i] in CHOSEN]
    if not rows:
        return keep, {}
    typicality = _typicality(pairs, rows)
    sites = [_site(pairs, i, statistics, t) for i, t in zip(rows, typicality)]
    choice = balance.choose(sites, seed, RULES)
    chosen = {(caption_id, v.type, v.text) for caption_id, by_type in choice.flips.items()
              for variants in by_type.values() for v in variants}
    left_out = {i for i in rows if (pairs["caption_id"][i], pairs["type"][i], pairs["variant"][i]) not in chosen}
    valid = Counter(pairs["type"][i] for i in rows)
    figures = {t: {"judged_valid": valid[t], **{k: entry.get(k) for k in FIGURES},
                   "rounds": choice.report["sets"][t]["rounds"]}
               for t, entry in choice.report["per_type"].items()}
    return np.array([i for i in keep if int(i) not in left_out], dtype=np.int64), figures


def _typicality(pairs: dict[str, list], rows: list[int]) -> np.ndarray:
    """Per row of ``rows``, how much more typical its flip's changed words are of the words both texts share than
    its caption's (> 0: the flip's; minus :meth:`Pairs.typicality_margins`), from the build's captions of the images
    of the other statistics folds."""
    captions = {(pairs["image_id"][i], pairs["caption"][i]) for i in range(len(pairs["caption"]))}
    folds = np.array([image_fold(pairs["image_id"][i]) for i in rows])
    reader = Pairs([pairs["caption"][i] for i in rows], [pairs["variant"][i] for i in rows])
    out = np.zeros(len(rows))
    for fold in range(FOLDS):
        corpus = sorted(text for image_id, text in captions if image_fold(image_id) != fold)
        where = np.flatnonzero(folds == fold)
        out[where] = -reader.typicality_margins(corpus, where)
    return out


def _site(pairs: dict[str, list], i: int, statistics: FoldedCounts, typicality: float) -> balance.Site:
    """Row ``i`` as a site of one candidate, with the readings the choice balances (the image's other folds)."""
    caption, text, image_id = pairs["caption"][i], pairs["variant"][i], pairs["image_id"][i]
    scorer = statistics.for_image(image_id)
    [(trigram, halves)] = scorer.trigram_readings(caption, [text])
    figures = {"tier": 0, "lm_delta": round(scorer.lm_delta(caption, text), 6), "trigram_delta": trigram,
               "trigram_halves": halves, "typicality": round(float(typicality), 6)}
    variant = Variant(text, schema.FLIP, pairs["type"][i], plausibility=figures)
    return balance.Site(pairs["caption_id"][i], image_id, caption, pairs["type"][i], (variant,))
