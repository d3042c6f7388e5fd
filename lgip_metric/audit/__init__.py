"""The artifact audit of a probe set: how far text alone goes on its (caption, negative) pairs.

A probe set is a table of pairs over images: a human caption and a negative (a flip) of it. If its
negatives carry a systematic text difference (a word that is only ever removed, a replacement drawn
from a skewed list), a model can score above chance without looking at the image. :func:`audit`
measures that on the set's own pairs with every text-only scorer LGIP has, each cross-fitted by
image so that no pair is scored by a model that saw its image:

- the learned adversaries of :mod:`lgip_dataset.selection.adversary` (the hypothesis-only / AFLite test):
  logistic regressions on word 1-2-gram and character 2-4-gram differences, one per type, trained on
  the other image folds' pairs; their held-out accuracy (pair-level, a tie counting 1/2) with a
  cluster-bootstrap interval over images;
- the context instruments (:mod:`lgip_dataset.selection.context_typicality`): how typical the changed words are
  with the words both texts share, from co-occurrence in other images' captions, and a learner on (changed,
  shared) word pairs;
- the n-gram language models of the blind baselines (:func:`lgip_metric.statistics.blind.lm_scores`: bigram and
  trigram Kneser-Ney, two image folds) with their PR (nested by caption as the model's PR is);
- the words that the negatives remove or add most unevenly (:func:`word_artifacts`): the diagnosis.

Per type and per headline block (the paper's flips ``object,color,count`` together, the hard flips together, all flips).
A cross-fitted figure over too few images, or whose pairs no model of another fold could score, is ``None`` with its
reason (``not_measurable``; :mod:`lgip_dataset.selection.measurable`), never a number. Optionally
(:func:`untrained_check`) models with random weights score the pairs whose images are at hand: a model that cannot see
sits at PR 0.5 on a probe whose texts carry no systematic difference.

Inputs (:func:`from_build`, :func:`from_sugarcrepe`, :func:`from_pairs_file`) are checked before any
expensive work; a bad one raises :class:`~lgip_dataset.errors.DataError` naming the file, column or row.

Files: :mod:`~lgip_metric.audit.sources` (inputs), :mod:`~lgip_metric.audit.blocks` (the headline blocks, below
both), :mod:`~lgip_metric.audit.text_only` (the scorers),
:mod:`~lgip_metric.audit.untrained`, :mod:`~lgip_metric.audit.markdown` and
:mod:`~lgip_metric.audit.extended` (the extended-probe section of ``lgip audit --beside``). The audit
scores untrained models through :mod:`lgip_metric.api`, so it sits above it: it may import every room
of lgip_metric but the commands (``docs/architecture.md``).
"""
from lgip_metric.audit.blocks import ALL_BLOCK, HARD_BLOCK, PAPER_BLOCK, blocks
from lgip_metric.audit.held_out import LEARNERS, corpus_captions
from lgip_metric.audit.markdown import markdown, scaling_markdown
from lgip_metric.audit.sources import Source, flip_rows, from_build, from_pairs_file, from_sugarcrepe
from lgip_metric.audit.text_only import (MIN_USES, NGRAM_SCORERS, TOP_WORDS, audit, check_learners, positive_rates,
                                         scaling, word_artifacts)
from lgip_metric.audit.untrained import image_files, untrained_check

__all__ = ["ALL_BLOCK", "HARD_BLOCK", "LEARNERS", "MIN_USES", "NGRAM_SCORERS", "PAPER_BLOCK", "TOP_WORDS", "Source", "audit", "blocks",
           "check_learners", "corpus_captions", "scaling", "scaling_markdown", "flip_rows", "from_build", "from_pairs_file", "from_sugarcrepe", "image_files", "markdown",
           "positive_rates", "untrained_check", "word_artifacts"]
