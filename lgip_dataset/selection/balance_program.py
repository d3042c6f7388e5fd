"""The integer program of a balanced choice of flips (:mod:`lgip_dataset.selection.balance`): one block of sites.

Variables, in this order: one per candidate (chosen or not), one per (image, type) and one per image (covered
or not), and one per balance cell (how far its net count misses its target beyond the tolerance). A *cell* is
a (type, word or word bigram) of the two texts' difference; its net count is the number of chosen flips that
remove it less the number that insert it. The flips that the bigram LM, and the trigram LM where the family records
its figure, find likelier than their caption are held as many as those they find less likely, per type and band of
the LM's strength. Solved with ``scipy.optimize.milp`` (HiGHS), single-threaded.
"""
from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from lgip_dataset.ngram import words
from lgip_dataset.perturb.registry import HARD
from lgip_dataset.perturb.variant import Variant

WORD_TOLERANCE = 2  # |net - target| of every word of a type's differences, at most, before a deviation is paid
BIGRAM_TOLERANCE = 2  # the same for the word bigrams of the differences ("white sink" -> "pink sink")
TARGET_SPREAD = 1.0  # the targets' spread, in standard deviations of the net count a fair coin per image would give
JOINT_TARGET_TYPES = ("hard_count",)  # types whose flips move several words together ("A dog is" -> "Two dogs are"):
# their cells' targets are drawn jointly, one fair coin per image (Program.retarget)
BIGRAM_MIN_USES = 8  # a bigram is balanced only where its candidates use it at least this often
DEVIATION_COST = 1.5  # per unit a cell's net count misses its target beyond the tolerance
LM_TOLERANCE = 0.01  # |LM-prefers-caption - LM-prefers-flip| within a type and band, as a share of its sites (>= 2)
LM_BANDS = (0.5, 1.5)  # |log-probability difference| bands within which the LM's preference is balanced
TYPICALITY_BANDS = (1.0, 3.0)  # |typicality| bands (nats) within which the caption typicality's preference is balanced
# where the typicality reading is held even: a flip counts as reading more typical than its caption once its typicality
# (hard.py: the caption's words under the replacement less under the original, the build's other statistics fold) is
# above this. Above 0, since a reader of other captions finds the chosen flips less typical than their own reading
# says: measured on val2017 (the rules' tuning set), the build's typicality at which the audit's context typicality
# from the Karpathy test captions of other images reads a flip as typical as its caption (a logistic fit over the
# chosen flips: 0.91 for objects, 0.65 for colours, 0.99 for counts). Colours' 0.45 (2.20.0) sits between that reading and
# the audit's typicality from the other folds, which read 0.456 and 0.446 at 0.65 (val2017 seeds 0 and 1; 0.475 and
# 0.462 at 0.45, the corpus reading 0.521 and 0.515)
TYPICALITY_OFFSET = {"hard_object": 0.9, "hard_color": 0.45, "hard_count": 1.0}
FLIP_WORTH = 1.0  # what a chosen flip is worth
TYPE_COVER_WORTH = 2.0  # what an image with a flip of a type is worth, beyond its flips
HARD_TYPE_COVER_WORTH = 5.0  # the same for a hard type (HARD), which must reach its coverage under the offsets
# (val2017's default build at 3.0 with 2.10.0's count candidates: hard_count on 49.2% of images, under the 50% goal;
# 2.11.0's typicality balance at 4.0: 48.3%, at 5.0: 49.5% and the held-out word learner 0.535, at 6.0: 50.4% and 0.549)
IMAGE_COVER_WORTH = 12.0  # what an image with any hard flip is worth, beyond its types: enough that every image with a
# fitting candidate gets one (at 4.0 the val2017 build left 17 such images without a flip: 94.8% against 95.1%)
TIER_COST = 0.25  # per tier further from the original's kind
LEARNER_COST = 0.4  # per unit of positive cross-fitted learner margin
MIP_GAP = 1e-6  # relative gap every integer solve is taken to
MIP_NODES = 500  # branch-and-bound nodes an integer solve may take before its best solution is kept: a bound that,
# unlike a time limit, gives every machine the same choice (the hard set of the Karpathy-only build, hard families
# 2.12.0: one solve past ten minutes without it, 109 s and a gap of 1.2e-5 with it); the gap each solve reached is
# recorded
MIN_CALIBRATION = 1000  # candidates of a type with both halves' trigram readings before their offset is measured (the
# correlation of 1,000 readings has a standard error of about 0.03; the embedded sample has a few hundred)


@dataclass(frozen=True)
class Rules:
    """What a choice holds, where it differs from the hard set's: the adversarial rounds' ``learners``
    (:mod:`lgip_dataset.selection.adversary`), the types whose typicality reading is held even and where (None:
    :data:`TYPICALITY_OFFSET`), the candidates a type needs before its trigram offset is measured
    (:func:`trigram_offset`), the types whose cells' targets are drawn jointly (:meth:`Program.retarget`), whether word
    bigrams are cells (``BIGRAM_MIN_USES``), the cost per unit of a candidate's positive learner margin when the
    rounds choose again, and the random image partitions of the learners per round."""
    learners: tuple[str, ...] = ("word",)
    typicality_offsets: dict[str, float] | None = None
    min_calibration: int = MIN_CALIBRATION
    joint_targets: tuple[str, ...] = JOINT_TARGET_TYPES
    bigrams: bool = True
    learner_cost: float = LEARNER_COST
    draws: int = 3


@dataclass(frozen=True)
class Site:
    """One site of a hard family in one caption, with its pool of candidate flips."""
    caption_id: str
    image_id: object
    caption: str
    type: str
    candidates: tuple[Variant, ...]


def word_diff(caption: str, variant: str) -> tuple[Counter, Counter]:
    """(removed, inserted) words of the flip: the two texts' word multisets less what they share."""
    before, after = Counter(words(caption)), Counter(words(variant))
    return before - after, after - before


def bigram_diff(caption: str, variant: str) -> tuple[Counter, Counter]:
    """(removed, inserted) word bigrams of the flip: what a word 1-2-gram learner reads beyond the words."""
    def bigrams(text: str) -> Counter:
        tokens = words(text)
        return Counter(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))

    before, after = bigrams(caption), bigrams(variant)
    return before - after, after - before


def trigram_offset(delta: np.ndarray, halves: np.ndarray, min_calibration: int = MIN_CALIBRATION) -> float:
    """How far above 0 a candidate's trigram ``delta`` must be for an independent reader to expect it as likely as its
    caption: among one type's candidates, E[independent | delta] = m + b (delta - m), with m their mean ``delta`` and b
    the reliability of one reading (Spearman-Brown from the correlation r of the two ``halves``' readings, 2r / (1 + r)),
    is 0 at delta = m (1 - 1/b). A choice that balances the sign of ``delta`` itself keeps the flips it reads too
    kindly: selected on a noisy reading, they regress to the candidates' mean, below 0. 0 where it cannot be told
    (fewer than ``min_calibration`` candidates with both halves, no spread, or a mean above 0)."""
    both = ~np.isnan(halves).any(axis=1) & ~np.isnan(delta)
    if both.sum() < min_calibration or np.ptp(halves[both, 0]) == 0 or np.ptp(halves[both, 1]) == 0:
        return 0.0
    r = float(np.corrcoef(halves[both, 0], halves[both, 1])[0, 1])
    mean = float(delta[both].mean())
    if not r > 0 or mean >= 0:
        return 0.0
    return mean * (1 - (1 + r) / (2 * r))


def tie_break(seed: int, *parts) -> float:
    """A number in [0, 1) from a SHA-256 of the seed and ``parts``, the same on every machine."""
    digest = hashlib.sha256("\x1f".join(map(str, (seed, *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0 ** 64


class Program:
    """The candidates of every site of one block as one flat table, and the integer program of their choice."""

    def __init__(self, sites: list[Site], seed: int, rules: Rules = Rules()):
        self.sites, self.seed, self.rules = sites, seed, rules
        self.typicality_offsets = TYPICALITY_OFFSET if rules.typicality_offsets is None else rules.typicality_offsets
        rows = [(s, v) for s, site in enumerate(sites) for v in site.candidates]
        self.site = np.array([s for s, _ in rows], dtype=np.int64)
        self.variants = [v for _, v in rows]
        self.captions = [sites[s].caption for s, _ in rows]
        self.types = [sites[s].type for s, _ in rows]
        self.image_ids = [sites[s].image_id for s, _ in rows]
        self.tier = np.array([v.plausibility["tier"] for v in self.variants], dtype=np.float64)
        self.lm_delta = np.array([v.plausibility["lm_delta"] for v in self.variants], dtype=np.float64)
        self.trigram_delta = np.array([v.plausibility.get("trigram_delta", np.nan) for v in self.variants],
                                      dtype=np.float64)  # NaN where the family records none (hard_relation)
        self.typicality = np.array([v.plausibility.get("typicality", np.nan) if v.type in self.typicality_offsets
                                    else np.nan for v in self.variants], dtype=np.float64)  # NaN: a type not balanced
        halves = np.array([v.plausibility.get("trigram_halves", (np.nan, np.nan)) for v in self.variants],
                          dtype=np.float64).reshape(len(rows), 2)
        self.type_names, self.type_index = np.unique(np.array(self.types, dtype=str), return_inverse=True)
        self.trigram_offsets = {str(t): trigram_offset(self.trigram_delta[self.type_index == k],
                                                       halves[self.type_index == k], rules.min_calibration)
                                for k, t in enumerate(self.type_names)}
        self.noise = np.array([tie_break(seed, sites[s].caption_id, v.text) for s, v in rows])
        self.diffs = [word_diff(c, v.text) for c, v in zip(self.captions, self.variants)]
        keys, self.group = np.unique(np.array([f"{i}\x1f{t}" for i, t in zip(self.image_ids, self.types)]),
                                     return_inverse=True)
        self.group_worth = np.array([HARD_TYPE_COVER_WORTH if k.split("\x1f")[1] in HARD else TYPE_COVER_WORTH
                                     for k in keys])
        self.image_keys, self.image = np.unique(np.array([str(i) for i in self.image_ids]), return_inverse=True)
        self.group_count, self.image_count = int(self.group.max(initial=-1)) + 1, int(self.image.max(initial=-1)) + 1
        self.cells = self._cells()
        self.width = len(self) + self.group_count + self.image_count + len(self.cells)
        self.target = np.zeros(len(self.cells))  # every cell's net count aimed at (0 until retarget())
        self.soft = False  # exact balance (deviations held at 0) until retarget()
        self.gaps: list[float] = []  # the relative gap each integer solve reached
        self._constraints = self._build_constraints()

    def __len__(self) -> int:
        return len(self.variants)

    def _rows(self, rows, columns, values, count: int) -> sp.csr_matrix:
        return sp.csr_matrix((values, (rows, columns)), shape=(count, self.width))

    def _cells(self) -> dict[tuple, dict[int, float]]:
        """Per (type, word or bigram): each candidate's net count, in a fixed order (a set's order follows the
        process's string hashing, and the row order steers which of equally worthy choices HiGHS returns)."""
        cells: dict[tuple, dict[int, float]] = defaultdict(dict)
        for j, (caption, variant) in enumerate(zip(self.captions, self.variants)):
            for removed, inserted in (self.diffs[j], bigram_diff(caption, variant.text)):
                for grams, sign in ((removed, 1.0), (inserted, -1.0)):
                    for gram, k in grams.items():
                        cells[(self.types[j], gram)][j] = cells[(self.types[j], gram)].get(j, 0.0) + sign * k
        # a bigram few candidates use stays as the generator makes it: held near a target, such rare cells lean
        # against their own test folds for any learner that weighs rare n-grams (naive Bayes)
        return {cell: row for cell, row in cells.items()
                if " " not in cell[1] or self.rules.bigrams and sum(map(abs, row.values())) >= BIGRAM_MIN_USES}

    def _build_constraints(self) -> list[LinearConstraint]:
        n, candidates, count = len(self), np.arange(len(self)), len(self.cells)
        one_per_site = self._rows(self.site, candidates, np.ones(n), len(self.sites))
        entries = [(r, j, v) for r, row in enumerate(self.cells.values()) for j, v in row.items() if v]
        r, c, v = zip(*entries) if entries else ((), (), ())
        self.balance = self._rows(r, c, v, count)
        self.tolerance = np.array([BIGRAM_TOLERANCE if " " in gram else WORD_TOLERANCE for _, gram in self.cells])
        deviation = self._rows(np.arange(count), n + self.group_count + self.image_count + np.arange(count),
                               np.ones(count), count)
        offset = np.array([self.trigram_offsets[t] for t in self.type_names])[self.type_index]
        typical = self.typicality - np.array([self.typicality_offsets.get(t, 0.0)
                                              for t in self.type_names])[self.type_index]
        lm = [self._preference(self.lm_delta), self._preference(self.trigram_delta - offset),
              self._preference(typical, TYPICALITY_BANDS)]
        texts = defaultdict(list)  # one flip per text of a caption (two sites seldom give the same text)
        for j, variant in enumerate(self.variants):
            texts[(self.sites[self.site[j]].caption_id, variant.text)].append(j)
        twins = [js for js in texts.values() if len(js) > 1]
        tr = [(t, j) for t, js in enumerate(twins) for j in js]
        twin_rows = self._rows([t for t, _ in tr], [j for _, j in tr], np.ones(len(tr)), len(twins))
        constraints = [LinearConstraint(one_per_site, -np.inf, 1.0),
                       LinearConstraint(self.balance - deviation, -np.inf, self.tolerance),  # net - deviation
                       LinearConstraint(self.balance + deviation, -self.tolerance, np.inf),  # net + deviation
                       *(LinearConstraint(rows, -slack, slack) for rows, slack in lm),
                       LinearConstraint(twin_rows, -np.inf, 1.0)]
        # a (image, type) or an image counts as covered only when one of its candidates is chosen
        for index, offset, total in ((self.group, n, self.group_count),
                                     (self.image, n + self.group_count, self.image_count)):
            cover = self._rows(np.r_[index, np.arange(total)], np.r_[candidates, offset + np.arange(total)],
                               np.r_[-np.ones(n), np.ones(total)], total)
            constraints.append(LinearConstraint(cover, -np.inf, 0.0))
        return constraints

    def _preference(self, delta: np.ndarray, edges: tuple[float, ...] = LM_BANDS) -> tuple[sp.csr_matrix, np.ndarray]:
        """The rows that count, per type and band of a reading's strength (``edges`` on ``|delta|``: an LM's by
        default), the chosen flips it finds likelier (more typical) than their caption less those it finds less so,
        and how far each may be from 0 (``LM_TOLERANCE`` of the type's sites, at least 2). A candidate without a
        ``delta`` (NaN) is in no row."""
        type_names, type_index = self.type_names, self.type_index
        bands = len(edges) + 1
        band = np.searchsorted(np.asarray(edges), np.abs(np.nan_to_num(delta)), side="right")
        sign = np.where(np.isnan(delta), 0.0, np.sign(np.nan_to_num(delta)))
        rows = self._rows(type_index * bands + band, np.arange(len(self)), sign, len(type_names) * bands)
        sites_of_type = Counter(site.type for site in self.sites)
        slack = np.repeat([max(2.0, np.floor(LM_TOLERANCE * sites_of_type[t])) for t in type_names], bands)
        return rows, slack

    def retarget(self, chosen: np.ndarray) -> None:
        """Balance every cell to a seeded random target instead of zero, missed only at a cost per unit.

        The target is the net count that a fair coin per image would give. Per cell: z * s, with z standard
        normal from a SHA-256 of the seed and the cell, and s the square root of the sum over images of the
        squared uses of the cell by the flips in ``chosen`` (captions of one image share their words, so they
        lean together), times ``TARGET_SPREAD``. For the types of the rules' ``joint_targets``, whose flips move
        several words together, jointly: the net count of ``chosen`` with the flips of each image reversed
        where a seeded fair coin of that image says so, the same coins for every cell, so that cells that move
        together get targets that can be met together (independent targets for "dog" and "dogs", "is" and
        "are" contradict each other, and the choice settles between them, nearer zero). A set balanced exactly
        makes a learner cross-fitted on it read below chance on any partition (the training folds lean against
        the test fold by construction); a set balanced to such targets looks to a learner like the flips of an
        unbiased generator."""
        from scipy.special import ndtri

        n = len(self)
        by_image = sp.csr_matrix((chosen.astype(np.float64), (np.arange(n), self.image)), shape=(n, self.image_count))
        per_image = (abs(self.balance[:, :n]) @ by_image).tocsr()  # each cell's uses per image
        spread = np.sqrt(np.asarray(per_image.multiply(per_image).sum(axis=1)).ravel())
        z = ndtri(np.array([tie_break(self.seed, "target", *cell) * (1 - 2e-9) + 1e-9 for cell in self.cells]))
        coins = np.array([1.0 if tie_break(self.seed, "coin", image) < 0.5 else -1.0 for image in self.image_keys])
        joint = (self.balance[:, :n] @ by_image) @ coins  # each cell's signed net per image, under the coins
        is_joint = np.array([type_ in self.rules.joint_targets for type_, _ in self.cells], dtype=bool)
        self.target = np.round(np.where(is_joint, joint, TARGET_SPREAD * z * spread))
        self.soft = True
        self._constraints[1] = LinearConstraint(self._constraints[1].A, -np.inf, self.target + self.tolerance)
        self._constraints[2] = LinearConstraint(self._constraints[2].A, self.target - self.tolerance, np.inf)

    def misses(self, chosen: np.ndarray) -> dict[str, np.ndarray]:
        """Per type, how far each of its cells' net count over ``chosen`` is from its target beyond the tolerance."""
        net = self.balance[:, :len(self)] @ chosen.astype(np.float64)
        miss = np.maximum(np.abs(net - self.target) - self.tolerance, 0.0)
        types = np.array([t for t, _ in self.cells], dtype=object)
        return {t: miss[types == t] for t in sorted(set(types))}

    def solve(self, margins: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """The chosen candidates (a boolean mask) that maximise the worth of the choice under balance.

        The linear relaxation is nearly integral (the constraints are those of a flow but for the candidates
        that change several words and the coverage variables): it is solved first, its integral values are
        kept, and the integer program is solved over the fractional ones; if that has no solution, over every
        candidate the relaxation uses, and over all of them if that has none either."""
        n, cells = len(self), len(self.cells)
        learners = self.rules.learner_cost * np.maximum(margins, 0.0)
        flips = FLIP_WORTH - TIER_COST * self.tier - learners + 1e-3 * self.noise
        worth = np.r_[flips, self.group_worth, np.full(self.image_count, IMAGE_COVER_WORTH),
                      np.full(cells, -DEVIATION_COST)]
        upper = np.r_[np.where(allowed, 1.0, 0.0), np.ones(self.group_count + self.image_count),
                      np.full(cells, np.inf if self.soft else 0.0)]
        binary = np.arange(self.width) < self.width - cells
        relaxed = self._milp(worth, np.zeros(self.width), upper, np.zeros(self.width))
        if relaxed is None:
            raise RuntimeError("the balanced choice of hard flips found no solution")
        unused = np.where(binary & (relaxed < 1e-6), 0.0, upper)
        result = self._milp(worth, np.where(binary & (relaxed > 1 - 1e-6), 1.0, 0.0), unused, binary)
        if result is None:
            result = self._milp(worth, np.zeros(self.width), unused, binary)
        if result is None:
            result = self._milp(worth, np.zeros(self.width), upper, binary)
        if result is None:
            raise RuntimeError("the balanced choice of hard flips found no solution")
        return result[:n] > 0.5

    def _milp(self, worth: np.ndarray, lower: np.ndarray, upper: np.ndarray, integrality) -> np.ndarray | None:
        result = milp(-worth, constraints=self._constraints, integrality=np.asarray(integrality, dtype=np.int64),
                      bounds=Bounds(lower, upper), options={"mip_rel_gap": MIP_GAP, "node_limit": MIP_NODES})
        if result.x is not None and np.any(integrality):
            self.gaps.append(float(getattr(result, "mip_gap", 0.0) or 0.0))
        return result.x


def describe() -> dict:
    """The program's constants, for a build's record."""
    return {"word_tolerance": WORD_TOLERANCE, "bigram_tolerance": BIGRAM_TOLERANCE, "target_spread": TARGET_SPREAD,
            "joint_target_types": list(JOINT_TARGET_TYPES),
            "bigram_min_uses": BIGRAM_MIN_USES,
            "deviation_cost": DEVIATION_COST, "lm_tolerance": LM_TOLERANCE, "lm_bands": list(LM_BANDS),
            "typicality_bands": list(TYPICALITY_BANDS), "typicality_offset": TYPICALITY_OFFSET,
            "flip_worth": FLIP_WORTH, "type_cover_worth": TYPE_COVER_WORTH,
            "hard_type_cover_worth": HARD_TYPE_COVER_WORTH, "image_cover_worth": IMAGE_COVER_WORTH,
            "tier_cost": TIER_COST, "learner_cost": LEARNER_COST, "mip_rel_gap": MIP_GAP, "mip_node_limit": MIP_NODES,
            "trigram_offset": "per type and block: m (1 - (1 + r) / 2r) over its candidates (trigram_offset), "
                              f"0 below {MIN_CALIBRATION} candidates"}
