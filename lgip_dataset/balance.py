"""Choose the hard flips of a whole set of captions at once, so that text alone cannot tell them apart.

A hard family offers, per site of a caption, a *pool* of fitting replacements
(:meth:`lgip_dataset.perturb.Perturber.hard_pools`). Chosen one caption at a time, the flips carry the
generator's habits: counts only go from one to many, "boy" is far more often inserted than removed,
"grey" is only ever removed. A learner that sees only the two texts finds such habits, and so can a
model's text tower. Here the choice is made for the set, as one integer program per build and set (the hard types together;
``hard_relation``, which offers pools the same way, on its own, so that building it never moves a hard
flip) (``scipy.optimize.milp``, HiGHS):

* **balance by construction**: within each hard type, every word is removed by the chosen flips as
  often as it is inserted, to within ``WORD_TOLERANCE`` (the words of the two texts' difference: the
  replaced word and the agreement edits, "A dog is" -> "Two dogs are"), and the flips that the
  build's bigram LM finds less likely than their caption are as many as those it finds more likely,
  to within ``LM_TOLERANCE`` of the type's sites. The words balance within each image fold of the
  learner too (``BALANCE_WITHIN_FOLDS``): balanced over the whole set only, the folds a learner trains on
  lean exactly the other way from the fold it is tested on, and a cross-fitted learner then reads
  *below* chance (measured on val2017: a character learner at 0.42), which is an artifact of the
  balance, not of the texts;
* **coverage on images**: at most one flip per site; an image with a hard flip is worth
  ``IMAGE_COVER_WORTH`` and each of its types with one ``TYPE_COVER_WORTH`` beyond the flips'
  ``FLIP_WORTH``, so the program covers every image and type the balance allows before it adds flips;
* **filtered second, cross-fitted**: the learner of :mod:`lgip_dataset.adversary` (word 1-2-grams),
  trained on the chosen flips of the *other* image folds only, scores every candidate of a fold; the
  choice is made again with each candidate's margin as a cost, and candidates it still picks out with
  a margin above ``FILTER_MARGIN`` are dropped before the last choice (which is balanced again). No
  candidate is ever judged by a learner trained on its own image's flips. The report ends with the same
  learner's held-out accuracy on the chosen set (trained on the other folds' chosen flips), the audit
  that ``lgip audit`` repeats on the built folder.

The result depends only on the pools and the seed (ties are broken by a SHA-256 of the seed and the
texts).
"""
from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from lgip_dataset.adversary import FOLDS, accuracy_interval, fold_margins, held_out_accuracy, image_folds, pair_features
from lgip_dataset.measurable import learner_reason
from lgip_dataset.ngram import words
from lgip_dataset.perturb.registry import HARD
from lgip_dataset.perturb.variant import Variant

WORD_TOLERANCE = 2  # |removed - inserted| of every word within a type, at most, in all and in each image fold
BALANCE_WITHIN_FOLDS = True  # each image fold of the learner balanced on its own too (see the module docstring)
LM_TOLERANCE = 0.01  # |LM-prefers-caption - LM-prefers-flip| within a type, as a share of its sites (at least 2)
FLIP_WORTH = 1.0  # what a chosen flip is worth
TYPE_COVER_WORTH = 2.0  # what an image with a flip of a type is worth, beyond its flips
IMAGE_COVER_WORTH = 4.0  # what an image with any hard flip is worth, beyond its types
TIER_COST = 0.25  # per tier further from the original's kind
LEARNER_COST = 0.4  # per unit of positive cross-fitted learner margin
FILTER_MARGIN = 1.75  # candidates the cross-fitted learner picks out with a larger margin are dropped
ROUNDS = 1  # learner rounds (each a choice with the margins as costs) before the filter
MIN_USES = 20  # words with at least this many uses are reported in the balance figures


@dataclass(frozen=True)
class Site:
    """One site of a hard family in one caption, with its pool of candidate flips."""
    caption_id: str
    image_id: object
    caption: str
    type: str
    candidates: tuple[Variant, ...]


@dataclass
class Choice:
    """The chosen flips per caption id and type (in site order), and the figures of the choice."""
    flips: dict[str, dict[str, list[Variant]]] = field(default_factory=dict)
    report: dict = field(default_factory=dict)


def _diff(caption: str, variant: str) -> tuple[Counter, Counter]:
    """(removed, inserted) words of the flip: the two texts' word multisets less what they share."""
    before, after = Counter(words(caption)), Counter(words(variant))
    return before - after, after - before


def _tie_break(seed: int, caption_id: str, text: str) -> float:
    digest = hashlib.sha256(f"{seed}\x1f{caption_id}\x1f{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64


class _Problem:
    """The candidates of every site as one flat table, and the integer program of a balanced choice: one
    variable per candidate (chosen or not), then one per (image, type) and one per image (covered or not)."""

    def __init__(self, sites: list[Site], seed: int):
        self.sites = sites
        rows = [(s, v) for s, site in enumerate(sites) for v in site.candidates]
        self.site = np.array([s for s, _ in rows], dtype=np.int64)
        self.variants = [v for _, v in rows]
        self.captions = [sites[s].caption for s, _ in rows]
        self.types = [sites[s].type for s, _ in rows]
        self.image_ids = [sites[s].image_id for s, _ in rows]
        self.tier = np.array([v.plausibility["tier"] for v in self.variants], dtype=np.float64)
        self.lm_sign = np.sign([v.plausibility["lm_delta"] for v in self.variants])
        self.noise = np.array([_tie_break(seed, sites[s].caption_id, v.text) for s, v in rows])
        self.diffs = [_diff(c, v.text) for c, v in zip(self.captions, self.variants)]
        self.fold = image_folds(self.image_ids) if BALANCE_WITHIN_FOLDS else np.full(len(rows), -1, dtype=np.int64)
        _, self.group = np.unique(np.array([f"{i}\x1f{t}" for i, t in zip(self.image_ids, self.types)]),
                                  return_inverse=True)
        _, self.image = np.unique(np.array([str(i) for i in self.image_ids]), return_inverse=True)
        self.width = len(self) + int(self.group.max(initial=-1)) + 1 + int(self.image.max(initial=-1)) + 1
        self._constraints = self._build_constraints()
        self._features = None  # the candidates' learner features (margins), once asked for

    def __len__(self) -> int:
        return len(self.variants)

    def _rows(self, rows, columns, values, count: int) -> sp.csr_matrix:
        return sp.csr_matrix((values, (rows, columns)), shape=(count, self.width))

    def _build_constraints(self) -> list[LinearConstraint]:
        n, candidates = len(self), np.arange(len(self))
        one_per_site = self._rows(self.site, candidates, np.ones(n), len(self.sites))
        cells: dict[tuple, dict[int, float]] = defaultdict(dict)  # (type, word, image fold or -1 for all)
        for j, (removed, inserted) in enumerate(self.diffs):
            for words_, sign in ((removed, 1.0), (inserted, -1.0)):
                for word, k in words_.items():
                    # overall, then in the image fold: a fixed order (a set's order follows the process's string
                    # hashing, and the constraints' row order steers which of equally worthy choices HiGHS returns)
                    for cell in dict.fromkeys(((self.types[j], word, -1), (self.types[j], word, int(self.fold[j])))):
                        cells[cell][j] = cells[cell].get(j, 0.0) + sign * k
        entries = [(r, j, v) for r, row in enumerate(cells.values()) for j, v in row.items() if v]
        r, c, v = zip(*entries) if entries else ((), (), ())
        balance = self._rows(r, c, v, len(cells))
        type_names = sorted(set(self.types))
        type_index = np.array([type_names.index(t) for t in self.types])
        lm = self._rows(type_index, candidates, self.lm_sign, len(type_names))
        sites_of_type = Counter(site.type for site in self.sites)
        lm_slack = np.array([max(2.0, np.floor(LM_TOLERANCE * sites_of_type[t])) for t in type_names])
        texts = defaultdict(list)  # one flip per text of a caption (two sites seldom give the same text)
        for j, variant in enumerate(self.variants):
            texts[(self.sites[self.site[j]].caption_id, variant.text)].append(j)
        twins = [js for js in texts.values() if len(js) > 1]
        tr = [(t, j) for t, js in enumerate(twins) for j in js]
        twin_rows = self._rows([t for t, _ in tr], [j for _, j in tr], np.ones(len(tr)), len(twins))
        constraints = [LinearConstraint(one_per_site, -np.inf, 1.0),
                       LinearConstraint(balance, -WORD_TOLERANCE, WORD_TOLERANCE),
                       LinearConstraint(lm, -lm_slack, lm_slack), LinearConstraint(twin_rows, -np.inf, 1.0)]
        # a (image, type) or an image counts as covered only when one of its candidates is chosen
        for index, offset in ((self.group, n), (self.image, n + int(self.group.max()) + 1)):
            count = int(index.max()) + 1
            cover = self._rows(np.r_[index, np.arange(count)], np.r_[candidates, offset + np.arange(count)],
                               np.r_[-np.ones(n), np.ones(count)], count)
            constraints.append(LinearConstraint(cover, -np.inf, 0.0))
        return constraints

    def solve(self, margins: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """The chosen candidates (a boolean mask) that maximise the worth of the choice under balance.

        The linear relaxation is nearly integral (the constraints are those of a flow but for the
        candidates that change several words and the coverage variables): it is solved first, its
        integral values are kept, and the integer program is solved over the fractional ones; if that
        has no solution, over every candidate the relaxation uses (measured on val2017: 16 s against 270 s
        for the whole program, within 1e-4 of its worth), and over all of them if that has none either."""
        flips = FLIP_WORTH - TIER_COST * self.tier - LEARNER_COST * np.maximum(margins, 0.0) + 1e-3 * self.noise
        covers = self.width - len(self) - (int(self.image.max()) + 1)
        worth = np.r_[flips, np.full(covers, TYPE_COVER_WORTH), np.full(self.width - len(self) - covers, IMAGE_COVER_WORTH)]
        upper = np.r_[np.where(allowed, 1.0, 0.0), np.ones(self.width - len(self))]
        relaxed = self._milp(worth, np.zeros(self.width), upper, integral=False)
        if relaxed is None:
            raise RuntimeError("the balanced choice of hard flips found no solution")
        unused = np.where(relaxed < 1e-6, 0.0, upper)
        result = self._milp(worth, np.where(relaxed > 1 - 1e-6, 1.0, 0.0), unused, True)
        if result is None:
            result = self._milp(worth, np.zeros(self.width), unused, True)
        if result is None:
            result = self._milp(worth, np.zeros(self.width), upper, integral=True)
        if result is None:
            raise RuntimeError("the balanced choice of hard flips found no solution")
        return result[:len(self)] > 0.5

    def _milp(self, worth: np.ndarray, lower: np.ndarray, upper: np.ndarray, integral: bool) -> np.ndarray | None:
        result = milp(-worth, constraints=self._constraints, integrality=np.full(self.width, int(integral)),
                      bounds=Bounds(lower, upper), options={"mip_rel_gap": 1e-6})
        return result.x

    def margins(self, chosen: np.ndarray) -> np.ndarray:
        """Every candidate's margin from word learners (one per type) trained on the chosen candidates of
        the other image folds (:func:`out_of_fold_margins`, the candidates' features computed once)."""
        if self._features is None:
            self._features = pair_features(self.captions, [v.text for v in self.variants])
        return fold_margins(self._features, image_folds(self.image_ids), np.unique(self.types, return_inverse=True)[1],
                            train=chosen)


def _set_of(type_: str) -> str:
    """The set a type is balanced in: the hard flips (``HARD``) together, every other type on its own."""
    return "hard" if type_ in HARD else type_


def choose(sites: list[Site], seed: int = 0) -> Choice:
    """The balanced choice of flips over ``sites`` (module docstring), one integer program per set: the
    hard flips together (``report["hard_set"]``), each other type alone (``report["sets"]``), so that
    building another family beside the hard ones never moves a hard flip."""
    choice = Choice(report={**describe(), "per_type": {}})
    sets: dict[str, list[Site]] = {}
    for site in sites:
        sets.setdefault(_set_of(site.type), []).append(site)
    for name, members in sets.items():
        flips, per_type, figures = _choose_set(members, seed)
        for caption_id, by_type in flips.items():
            choice.flips.setdefault(caption_id, {}).update(by_type)
        choice.report["per_type"].update(per_type)
        if name == "hard":
            choice.report["hard_set"] = figures
        else:
            choice.report.setdefault("sets", {})[name] = figures
    return choice


def _choose_set(sites: list[Site], seed: int) -> tuple[dict, dict, dict]:
    """The chosen flips (caption id -> type -> flips), the figures per type and the set's learner figures."""
    problem = _Problem(sites, seed)
    allowed = np.ones(len(problem), dtype=bool)
    margins = np.zeros(len(problem))
    chosen = problem.solve(margins, allowed)
    for _ in range(ROUNDS):
        margins = problem.margins(chosen)
        chosen = problem.solve(margins, allowed)
    final_margins = problem.margins(chosen)
    allowed = final_margins <= FILTER_MARGIN
    chosen = problem.solve(final_margins, allowed)
    audit = problem.margins(chosen)  # the held-out audit of the chosen set: learners of the other folds' choice
    flips: dict[str, dict[str, list[Variant]]] = {}
    for j in np.flatnonzero(chosen):
        site = sites[problem.site[j]]
        flips.setdefault(site.caption_id, {}).setdefault(site.type, []).append(problem.variants[j])
    return flips, _figures(problem, chosen, allowed, audit), _learner_figures(problem, chosen, audit)


def _learner_figures(problem: _Problem, picked: np.ndarray, margins: np.ndarray) -> dict:
    """The word learner's held-out accuracy on the ``picked`` flips (a mask) with its 95% image-bootstrap
    interval, or None with the reason it is not measurable."""
    ids = [problem.image_ids[j] for j in np.flatnonzero(picked)]
    reason = learner_reason(ids, [problem.types[j] for j in np.flatnonzero(picked)], FOLDS)
    if reason:  # no number where no learner could be trained (measurable.py)
        return {"learner_accuracy": None, "learner_interval": None, "learner_not_measurable": reason}
    return {"learner_accuracy": held_out_accuracy(margins[picked]),
            "learner_interval": accuracy_interval(margins[picked], ids, seed=0)}


def _figures(problem: _Problem, chosen: np.ndarray, allowed: np.ndarray, audit: np.ndarray) -> dict:
    """Per type: sites, candidates, filtered, chosen flips, images with a site and with a flip, the word
    balance reached (largest |removed - inserted|, and its share of the uses for words used at least
    ``MIN_USES`` times), the bigram LM's preferences, and the word learner's held-out accuracy."""
    figures = {}
    for type_ in sorted(set(problem.types)):
        of_type = np.array([t == type_ for t in problem.types])
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
        figures[type_] = {
            "sites": len(sites), "candidates": int(of_type.sum()), "filtered": int((of_type & ~allowed).sum()),
            "flips": len(picked), "images_with_site": len({problem.sites[s].image_id for s in sites}),
            "images_with_flip": len({problem.image_ids[j] for j in picked}),
            "largest_word_imbalance": max((abs(v) for v in net.values()), default=0),
            "largest_imbalance_share_frequent_words": max(frequent.values(), default=0.0),
            "frequent_words": len(frequent),
            "lm_prefers_caption": int((problem.lm_sign[picked] < 0).sum()),
            "lm_prefers_flip": int((problem.lm_sign[picked] > 0).sum()),
            **_learner_figures(problem, chosen & of_type, audit),
        }
    return figures


def describe() -> dict:
    """The rule's constants, for a build's record."""
    return {"rule": "one integer program per set (the hard types together, hard_relation alone) over every site's "
                    "pool of fitting candidates (scipy.optimize.milp, HiGHS): at most one flip per site; per type and image fold every word removed as often as "
                    "inserted, and as many flips the bigram LM finds likelier than their caption as the reverse, "
                    "within the tolerances; worth: each image and each (image, type) with a flip, then each flip "
                    "(less a cost per tier and per unit of cross-fitted learner margin); "
                    f"{ROUNDS} learner round(s), then the candidates the learner picks out with a margin above "
                    f"{FILTER_MARGIN} dropped and the choice made again; every learner trained on the chosen flips of "
                    "the other image folds only",
            "word_tolerance": WORD_TOLERANCE, "lm_tolerance": LM_TOLERANCE, "flip_worth": FLIP_WORTH,
            "type_cover_worth": TYPE_COVER_WORTH, "image_cover_worth": IMAGE_COVER_WORTH,
            "tier_cost": TIER_COST, "learner_cost": LEARNER_COST, "filter_margin": FILTER_MARGIN,
            "rounds": ROUNDS, "learner_folds": FOLDS, "balance_within_folds": BALANCE_WITHIN_FOLDS,
            "min_uses": MIN_USES}
