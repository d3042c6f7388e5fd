"""The public engine: paraphrases and semantic flips of one caption, seeded and deterministic."""
from __future__ import annotations

from collections.abc import Iterable

from lgip_dataset.errors import DataError
from lgip_dataset.perturb import families as _families  # noqa: F401  (registers the families)
from lgip_dataset.perturb.context import CaptionContext
from lgip_dataset.perturb.families.hard import POOLS
from lgip_dataset.perturb.lexicon import load_lexicon
from lgip_dataset.perturb.plausibility import FoldedCounts, attach
from lgip_dataset.perturb.registry import CORE, FAMILIES, group_of, resolve_families
from lgip_dataset.perturb.seeding import KeyedRandom, caption_key, family_key
from lgip_dataset.perturb.select import round_robin, text_key
from lgip_dataset.perturb.variant import PerturbResult, Variant

MAX_CAPTION_CHARS = 1000


def valid_unicode(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (JSON's ``"\\ud800"`` escapes and undecodable command-line
    bytes make unpaired surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Perturber:
    """Generates up to ``k_same`` paraphrases and ``k_diff`` flips per caption.

    The output depends only on (caption, seed, k_same, k_diff, lexicon version): each family draws
    from its own random stream keyed by sha256(seed, caption) XOR sha256(family name), and families
    take turns in the order of those keys, so every family with a candidate is represented.

    ``families`` (names, "core", "all"; default: the paper's core set) picks the families. The core
    families share the caps k_same / k_diff exactly as in a core-only run, so their selection is
    byte-identical whatever else is chosen; every other family is selected on its own, with the
    cap of its kind (k_same or k_diff) for itself alone, after the core ones, in registry order,
    skipping texts already chosen. Extra families never take a slot from the core types. The hard
    flips, a probe set reported in a block of its own, skip only texts of other hard flips: a hard
    flip may equal a paper flip of the caption.

    ``plausibility`` (folded caption counts) gives the hard families their statistics: a caption of
    image ``image_id`` is perturbed with the counts of the other folds only (cross-fitting); without
    it they use the shipped COCO counts.
    """

    families: tuple[str, ...] = CORE

    def __init__(self, k_same: int = 6, k_diff: int = 6, families: str | Iterable[str] | None = None,
                 plausibility: FoldedCounts | None = None):
        for name, k in (("k_same", k_same), ("k_diff", k_diff)):
            if not isinstance(k, int) or isinstance(k, bool) or k < 0:
                raise DataError(f"{name} must be a whole number >= 0, got {k!r}")
        self.k_same, self.k_diff = k_same, k_diff
        self.families = resolve_families(families)
        self.lexicon = load_lexicon()
        self.plausibility = plausibility

    @staticmethod
    def validate_caption(caption: object, what: str = "caption") -> str:
        """The caption without surrounding whitespace; DataError (naming ``what``) when it is not a
        string, empty, or longer than MAX_CAPTION_CHARS."""
        if not isinstance(caption, str):
            raise DataError(f"{what} must be text, got {type(caption).__name__}")
        if not valid_unicode(caption):
            raise DataError(f"{what} is not valid Unicode (an unpaired surrogate: bytes that are not UTF-8, or a "
                            "lone \\ud800-style escape); give UTF-8 text")
        text = caption.strip()
        if not text:
            raise DataError(f"{what} is empty: give a caption with at least one word")
        if len(text) > MAX_CAPTION_CHARS:
            raise DataError(f"{what} is {len(text)} characters long; shorten it to at most "
                            f"{MAX_CAPTION_CHARS} characters")
        return text

    def _context(self, caption: str, seed: int, image_id) -> CaptionContext:
        self.validate_caption(caption)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise DataError(f"seed must be a whole number, got {seed!r}")
        ctx = CaptionContext(caption, self.lexicon)
        if self.plausibility is not None:
            attach(ctx, self.plausibility.for_image(image_id))
        return ctx

    def hard_pools(self, caption: str, seed: int = 0, image_id: int | None = None) -> dict[str, list[list[Variant]]]:
        """Per chosen hard family, the pools of fitting candidates of its first ``k_diff`` sites in
        ``caption`` (:func:`lgip_dataset.perturb.families.hard.pool`), for a choice across a set
        of captions (:mod:`lgip_dataset.selection.balance`)."""
        ctx = self._context(caption, seed, image_id)
        base = caption_key(seed, caption)
        return {name: POOLS[name](ctx, KeyedRandom(family_key(base, name)))[:self.k_diff]
                for name in self.families if name in POOLS}

    def perturb(self, caption: str, seed: int = 0, image_id: int | None = None,
                hard_flips: dict[str, list[Variant]] | None = None) -> PerturbResult:
        """Paraphrases and flips of ``caption`` (used exactly as given: spans index into it);
        ``image_id`` picks the cross-fitted statistics of the hard families. ``hard_flips`` (per hard
        family, chosen across a set of captions by :mod:`lgip_dataset.selection.balance`) replaces the hard
        families' choice from this caption alone."""
        if hard_flips is not None:
            return self.with_hard_flips(self.perturb_without_pools(caption, seed, image_id), hard_flips)
        return self._perturb(caption, seed, image_id, pools=True)

    def perturb_without_pools(self, caption: str, seed: int = 0, image_id: int | None = None) -> PerturbResult:
        """:meth:`perturb` without the flips of the families whose flips are chosen across a set of captions
        (``hard.POOLS``), for :meth:`with_hard_flips` to add once they are chosen."""
        return self._perturb(caption, seed, image_id, pools=False)

    def _perturb(self, caption: str, seed: int, image_id: int | None, pools: bool) -> PerturbResult:
        ctx = self._context(caption, seed, image_id)
        base = caption_key(seed, caption)
        chosen = {}
        for kind, k in (("paraphrase", self.k_same), ("flip", self.k_diff)):
            core = [n for n in self.families if n in CORE and FAMILIES[n].kind == kind]
            chosen[kind] = self._select(ctx, base, core, k)
        seen = {text_key(v.text) for v in chosen["paraphrase"] + chosen["flip"]}
        hard_seen: set[str] = set()  # the hard flips are a probe set of their own: deduplicated among themselves
        for name in self.families:
            if name not in CORE and (pools or name not in POOLS):
                family = FAMILIES[name]
                extra = self._select(ctx, base, [name], self.k_same if family.kind == "paraphrase" else self.k_diff,
                                     hard_seen if group_of(name) == "hard" else seen)
                chosen[family.kind] += extra
        return PerturbResult(caption, chosen["paraphrase"], chosen["flip"])

    def with_hard_flips(self, result: PerturbResult, hard_flips: dict[str, list[Variant]]) -> PerturbResult:
        """``result`` (of :meth:`perturb_without_pools`) with ``hard_flips`` (per pooled family, chosen across a
        set of captions), each family's flips where its own would stand: no other family's choice depends on
        them, so this is what :meth:`perturb` with ``hard_flips`` gives."""
        flips = [v for v in result.flips if v.type in CORE]
        for name in self.families:
            if name not in CORE and FAMILIES[name].kind == "flip":
                flips += hard_flips.get(name, []) if name in POOLS else [v for v in result.flips if v.type == name]
        return PerturbResult(result.caption, result.paraphrases, flips)

    @staticmethod
    def _select(ctx: CaptionContext, base: int, names: list[str], k: int, seen: set[str] | None = None) -> list:
        """Up to ``k`` variants of the families ``names``, taking turns in the order of their keys."""
        keyed = sorted((family_key(base, n), FAMILIES[n]) for n in names)
        sites = [f.generate(ctx, KeyedRandom(key)) for key, f in keyed] if k else []
        return round_robin(sites, k, ctx.text, seen)
