"""Choose the hard flips of a whole set of captions at once, so that text alone cannot tell them apart.

A hard family offers, per site of a caption, a *pool* of fitting replacements
(:meth:`lgip_dataset.perturb.Perturber.hard_pools`). Chosen one caption at a time, the flips carry the
generator's habits: counts only go from one to many, "boy" is far more often inserted than removed,
"grey" is only ever removed, "white sink" is in captions and "pink sink" only in flips. A learner that
sees only the two texts finds such habits, and so can a model's text tower. Here the choice is made for
the set (the hard types together; ``hard_relation``, which offers pools the same way, on its own, so that
building it never moves a hard flip), as integer programs (:mod:`lgip_dataset.selection.balance_program`):

* **balanced to look unbiased, not exactly**: within each type, every word and word bigram of the two
  texts' difference ("A white sink" -> "A pink sink" removes "white" and "white sink", inserts "pink" and
  "pink sink") is removed as often as inserted up to a seeded random target, the net count an unbiased
  generator would show, drawn jointly (one fair coin per image) for hard_count, whose flips move several words
  together (:meth:`~lgip_dataset.selection.balance_program.Program.retarget`). Balanced exactly, every
  learner cross-fitted on the set reads *below* chance on any image partition (its training folds lean
  against its test fold by construction: measured on val2017, a character learner at 0.45 and a naive
  Bayes learner at 0.37 with exact bigram balance), which measures the balance, not the texts. The flips
  the build's bigram LM finds less likely than their caption are as many as those it finds more likely,
  within each band of the LM's strength, and so for the build's trigram LM of the captions outside the build
  where the family records its figure (the hard types), its reading moved by the offset at which an independent
  reader would expect a flip as likely as its caption (:func:`~lgip_dataset.selection.balance_program.trigram_offset`);
* **coverage on images**: at most one flip per site, every image and (image, type) with a flip worth more
  than a flip;
* **adversarially filtered, the AFLite way**: learners (word 1-2-gram logistic regressions, one per type)
  trained on the chosen flips of the other folds of ``DRAWS`` (:class:`Rules`' ``draws``) random image partitions
  (drawn from the build's own stream, :data:`STREAM`; an audit draws from another) score every candidate; while the mean
  held-out accuracy of a type is above ``TARGET`` (and two standard errors above chance), the ``DROP_SHARE`` of its
  chosen flips that the learners
  pick out most surely are dropped and the choice is made again with the mean margin of every candidate of
  the types ever above it as a cost, at most ``MAX_ROUNDS`` times (a type on target is chosen again without
  its margins: steered by them it leans past chance, against the learners). No candidate is judged by a
  learner that saw its image, nor its caption's text on another image: the partitions keep images that share
  a caption text together.

A set of more than ``BLOCK_CAPTIONS`` captions is chosen in blocks of images (a random partition from the build's
stream), each block one program balanced on its own, so the time grows linearly with the captions; the learners of
the rounds see the whole set. Every solve is taken to the gap ``MIP_GAP`` or ``MIP_NODES`` nodes (no time limit: the
same on any machine), and the gap each reached is recorded. The result depends only on the pools and the seed.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from lgip_dataset.perturb.registry import HARD
from lgip_dataset.perturb.variant import Variant
from lgip_dataset.selection import balance_program
from lgip_dataset.selection.adversary import (FOLDS, accuracy_interval, fold_margins, held_out_accuracy, pair_features,
                                              random_folds, text_groups)
from lgip_dataset.selection.balance_program import Program, Rules, Site
from lgip_dataset.selection.measurable import learner_reason

STREAM = 0x6275696C  # the build's partitions: numpy.random.default_rng([STREAM, seed, ...])
BLOCK_CAPTIONS = 30_000  # a set with more captions is chosen in blocks of images of about this many captions
DRAWS = Rules().draws  # random image partitions of the learners per round
LEARNERS = Rules().learners  # the build's learners (lgip_dataset.selection.adversary); an audit adds others
TARGET = 0.55  # the rounds stop once every type's mean held-out learner accuracy is at most this: the bound
# for a set; a round at 0.53 re-chose against the learner's margins past chance (val2017: naive Bayes 0.41 on hard_count)
MAX_ROUNDS = 6
DROP_SHARE = 0.04  # of a type's chosen flips above the target, the share the learners pick out most surely, per round
MIN_USES = 20  # words with at least this many uses are reported in the balance figures
_BLOCKS, _ROUND = 0, 1  # what a draw of the build's stream is for

__all__ = ["Choice", "Rules", "Site", "choose", "describe"]


@dataclass
class Choice:
    """The chosen flips per caption id and type (in site order), and the figures of the choice."""
    flips: dict[str, dict[str, list[Variant]]] = field(default_factory=dict)
    report: dict = field(default_factory=dict)


def _set_of(type_: str) -> str:
    """The set a type is balanced in: the hard flips (``HARD``) together, every other type on its own."""
    return "hard" if type_ in HARD else type_


def choose(sites: list[Site], seed: int = 0, rules: Rules = Rules()) -> Choice:
    """The balanced choice of flips over ``sites`` (module docstring) by ``rules``, per set: the hard flips together
    (``report["hard_set"]``), each other type alone (``report["sets"]``), so that building another family
    beside the hard ones never moves a hard flip."""
    choice = Choice(report={**describe(), "per_type": {}})
    sets: dict[str, list[Site]] = {}
    for site in sites:
        sets.setdefault(_set_of(site.type), []).append(site)
    for name, members in sets.items():
        flips, per_type, figures = _choose_set(members, seed, rules)
        for caption_id, by_type in flips.items():
            choice.flips.setdefault(caption_id, {}).update(by_type)
        choice.report["per_type"].update(per_type)
        if name == "hard":
            choice.report["hard_set"] = figures
        else:
            choice.report.setdefault("sets", {})[name] = figures
    return choice


class _Blocks:
    """The programs of a set's blocks of images, and the candidates of all of them in one order."""

    def __init__(self, sites: list[Site], seed: int, rules: Rules):
        self.learners, self.draws = rules.learners, rules.draws
        captions = len({site.caption_id for site in sites})
        count = max(1, -(-captions // BLOCK_CAPTIONS))
        block = random_folds([site.image_id for site in sites], count, (STREAM, seed, _BLOCKS))
        self.programs = [Program([s for s, b in zip(sites, block) if b == k], seed, rules) for k in range(count)]
        self.programs = [p for p in self.programs if len(p.sites)]
        self.sites = [site for p in self.programs for site in p.sites]
        self.site = np.concatenate([p.site + sum(len(q.sites) for q in self.programs[:k])
                                    for k, p in enumerate(self.programs)]) if self.programs else np.zeros(0, np.int64)
        self.variants = [v for p in self.programs for v in p.variants]
        self.captions = [c for p in self.programs for c in p.captions]
        self.types = np.array([t for p in self.programs for t in p.types], dtype=object)
        self.image_ids = [i for p in self.programs for i in p.image_ids]
        self.diffs = [d for p in self.programs for d in p.diffs]
        self.lm_sign = np.sign(np.concatenate([p.lm_delta for p in self.programs])) if self.programs else np.zeros(0)
        self.trigram_sign = (np.sign(np.concatenate([p.trigram_delta for p in self.programs])) if self.programs
                             else np.zeros(0))  # NaN where the family records no trigram figure
        self.typicality_sign = (np.sign(np.concatenate([p.typicality for p in self.programs])) if self.programs
                                else np.zeros(0))  # NaN where the type is not balanced on it
        self.type_names, self.type_index = np.unique(self.types.astype(str), return_inverse=True)
        ends = np.cumsum([len(p) for p in self.programs])
        self.spans = list(zip(np.r_[0, ends[:-1]].astype(int), ends.astype(int)))
        self.seed = seed
        self.groups = text_groups(self.image_ids, self.captions)  # what the rounds' partitions keep together
        self._features = None

    def __len__(self) -> int:
        return len(self.variants)

    def solve(self, margins: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Each block's choice (:meth:`Program.solve`), as one mask over all candidates."""
        parts = [p.solve(margins[a:b], allowed[a:b]) for p, (a, b) in zip(self.programs, self.spans)]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    def retarget(self, chosen: np.ndarray) -> None:
        """Each block's cells balanced to their random targets (:meth:`Program.retarget`)."""
        for program, (a, b) in zip(self.programs, self.spans):
            program.retarget(chosen[a:b])

    def margins(self, chosen: np.ndarray, round_: int) -> np.ndarray:
        """Every candidate's margins, one column per (partition, learner) of the round, from learners (one per
        type) trained on the chosen candidates of the other folds (the candidates' features computed once)."""
        if self._features is None:
            self._features = {learner: pair_features(self.captions, [v.text for v in self.variants], learner)
                              for learner in self.learners}
        columns = [fold_margins(self._features[learner], self.partition(round_, draw), self.type_index, train=chosen)
                   for draw in range(self.draws) for learner in self.learners]
        return np.column_stack(columns)

    def partition(self, round_: int, draw: int) -> np.ndarray:
        """Every candidate's fold in the ``draw``-th random partition of ``round_``: of the groups of images that share
        a caption text (:func:`~lgip_dataset.selection.adversary.text_groups`), so that no learner meets a held-out
        caption."""
        return random_folds(self.groups, FOLDS, (STREAM, self.seed, _ROUND, round_, draw))


def _choose_set(sites: list[Site], seed: int, rules: Rules) -> tuple[dict, dict, dict]:
    """The chosen flips (caption id -> type -> flips), the figures per type and the set's figures (module
    docstring: exact choice, random targets, then the adversarial rounds of the ``rules``' learners)."""
    problem = _Blocks(sites, seed, rules)
    allowed = np.ones(len(problem), dtype=bool)
    no_margins = np.zeros(len(problem))
    chosen = problem.solve(no_margins, allowed)
    problem.retarget(chosen)
    chosen = problem.solve(no_margins, allowed)
    rounds, steered = [], np.zeros(len(problem.type_names), dtype=bool)
    for round_ in range(MAX_ROUNDS + 1):
        margins = problem.margins(chosen, round_)
        held = _held_out(margins, chosen, problem.type_index, len(rules.learners))
        rounds.append({"chosen": int(chosen.sum()), "candidates_left": int(allowed.sum()),
                       "held_out": {str(problem.type_names[t]): a for t, a in held.items()}})
        above = [t for t, accuracy in held.items() if accuracy > _target(int((chosen & (problem.type_index == t)).sum()))]
        if not above or round_ == MAX_ROUNDS:
            break
        mean, sure = margins.mean(axis=1), (margins > 0).mean(axis=1) > 0.5
        steered[above] = True
        for t in above:
            of_type = np.flatnonzero(chosen & sure & (problem.type_index == t))
            count = int(np.ceil(DROP_SHARE * (chosen & (problem.type_index == t)).sum()))
            allowed[of_type[np.argsort(-mean[of_type], kind="stable")[:count]]] = False
        chosen = problem.solve(np.where(steered[problem.type_index], mean, 0.0), allowed)
    flips: dict[str, dict[str, list[Variant]]] = {}
    for j in np.flatnonzero(chosen):
        site = problem.sites[problem.site[j]]
        flips.setdefault(site.caption_id, {}).setdefault(site.type, []).append(problem.variants[j])
    audit = margins[:, 0], problem.partition(round_, 0)  # the last round's first partition: the in-sample figure
    figures = {**_learner_figures(problem, chosen, *audit), "rounds": rounds, "blocks": len(problem.programs),
               "mip_gaps": [g for p in problem.programs for g in p.gaps]}
    return flips, _figures(problem, chosen, allowed, audit), figures


def _target(flips: int) -> float:
    """The held-out accuracy a type of ``flips`` chosen flips must reach: ``TARGET``, or two binomial standard
    errors above chance where the type is too small for ``TARGET`` to be told from chance (no round chases noise)."""
    return max(TARGET, 0.5 + 2 * np.sqrt(0.25 / max(flips, 1)))


def _held_out(margins: np.ndarray, chosen: np.ndarray, type_index: np.ndarray, learners: int) -> dict[int, float]:
    """Per type (index), the highest over the ``learners`` of its mean over the round's partitions of the held-out
    accuracy on the chosen (the columns of ``margins`` run over partitions, then learners)."""
    def accuracy(t: int, k: int) -> float:
        return held_out_accuracy(margins[chosen & (type_index == t), k])

    return {int(t): max(float(np.mean([accuracy(t, k) for k in range(j, margins.shape[1], learners)]))
                        for j in range(learners))
            for t in np.unique(type_index[chosen])}


def _learner_figures(problem: _Blocks, picked: np.ndarray, margins: np.ndarray, partition: np.ndarray) -> dict:
    """The word learner's held-out accuracy on the ``picked`` flips (a mask) with its 95% image-bootstrap
    interval, or None with the reason it is not measurable."""
    ids = [problem.image_ids[j] for j in np.flatnonzero(picked)]
    reason = learner_reason(ids, [problem.types[j] for j in np.flatnonzero(picked)], FOLDS, partition[picked])
    if reason:  # no number where no learner could be trained (measurable.py)
        return {"learner_accuracy": None, "learner_interval": None, "learner_not_measurable": reason}
    return {"learner_accuracy": held_out_accuracy(margins[picked]),
            "learner_interval": accuracy_interval(margins[picked], ids, seed=0)}


def _figures(problem: _Blocks, chosen: np.ndarray, allowed: np.ndarray, audit: tuple) -> dict:
    """Per type: sites, candidates, filtered, chosen flips, images with a site and with a flip, the word
    balance reached (largest |removed - inserted|, and its share of the uses for words used at least
    ``MIN_USES`` times), the bigram LM's preferences, and the build's own word learner's held-out accuracy."""
    figures = {}
    for t, type_ in enumerate(problem.type_names.tolist()):
        of_type = problem.type_index == t
        picked = np.flatnonzero(chosen & of_type)
        net, uses = Counter(), Counter()
        for j in picked:
            removed, inserted = problem.diffs[j]
            net.update(removed)
            net.subtract(inserted)
            uses.update(removed)
            uses.update(inserted)
        frequent = {w: abs(net[w]) / uses[w] for w in uses if uses[w] >= MIN_USES}
        sites = {s for s, t in enumerate(problem.sites) if t.type == type_}
        missed = np.concatenate([p.misses(chosen[a:b]).get(type_, np.zeros(0))
                                 for p, (a, b) in zip(problem.programs, problem.spans)])
        figures[type_] = {
            "balance_cells": int(missed.size), "cells_off_target": int((missed > 0).sum()),
            "largest_target_miss": float(missed.max(initial=0.0)),
            "sites": len(sites), "candidates": int(of_type.sum()), "filtered": int((of_type & ~allowed).sum()),
            "flips": len(picked), "images_with_site": len({problem.sites[s].image_id for s in sites}),
            "images_with_flip": len({problem.image_ids[j] for j in picked}),
            "largest_word_imbalance": max((abs(v) for v in net.values()), default=0),
            "largest_imbalance_share_frequent_words": max(frequent.values(), default=0.0),
            "frequent_words": len(frequent),
            "lm_prefers_caption": int((problem.lm_sign[picked] < 0).sum()),
            "lm_prefers_flip": int((problem.lm_sign[picked] > 0).sum()),
            "trigram_prefers_caption": int((problem.trigram_sign[picked] < 0).sum()),
            "trigram_prefers_flip": int((problem.trigram_sign[picked] > 0).sum()),
            "typicality_prefers_caption": int((problem.typicality_sign[picked] < 0).sum()),
            "typicality_prefers_flip": int((problem.typicality_sign[picked] > 0).sum()),
            "trigram_offsets": [round(p.trigram_offsets[type_], 4) for p in problem.programs if type_ in p.trigram_offsets],
            **_learner_figures(problem, chosen & of_type, *audit),
        }
    return figures


def describe() -> dict:
    """The rule's constants, for a build's record."""
    return {"rule": "per set (the hard types together, hard_relation alone) and block of images, an integer program over "
                    "every site's pool of fitting candidates (scipy.optimize.milp, HiGHS): at most one flip per site; per "
                    "type every word and word bigram of the texts' difference removed as often as inserted up to a seeded "
                    "random target (the net count of a fair coin per image; for the types whose flips move several words "
                    "together, one coin per image for all their cells), missed only at a cost; as many flips the "
                    "bigram LM, and the trigram LM where the family records it (the hard types), finds likelier than "
                    "their caption as the reverse within each band of its strength, and as many flips whose caption typicality "
                    "(the build's other statistics fold) is above the type's offset as below it; worth: "
                    "each image and each (image, type) with a flip, then each flip (less a cost per tier and per unit of "
                    "cross-fitted learner margin); then adversarial rounds: word learners on random partitions of the "
                    "images (joined where they share a caption text) of the build's own stream score every candidate, and while a type's mean held-out accuracy is above the "
                    "target its most surely picked flips are dropped and the choice made again",
            **balance_program.describe(), "blocks_of_captions": BLOCK_CAPTIONS, "draws": DRAWS,
            "learners": list(LEARNERS), "learner_folds": FOLDS, "target": TARGET, "max_rounds": MAX_ROUNDS,
            "drop_share": DROP_SHARE, "partition_stream": STREAM, "min_uses": MIN_USES}
