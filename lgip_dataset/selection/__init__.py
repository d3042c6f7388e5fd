"""What a build chooses beyond each caption's own flips, and the text-only instruments it chooses against.

:mod:`.balance` chooses the hard flips of a whole set at once, as integer programs (:mod:`.balance_program`), so
that text alone cannot tell them apart; its instruments are the learned text-only adversaries (:mod:`.adversary`),
the context instruments (:mod:`.context_typicality`) and the rule of whether a cross-fitted figure was measured
(:mod:`.measurable`), which ``lgip audit`` reads too. :mod:`.groups` mines 2x2 groups of images whose human captions
differ by one flipped word.

It may import the top-level modules of :mod:`lgip_dataset` (the n-gram LMs among them), :mod:`lgip_dataset.files`,
:mod:`lgip_dataset.records` and :mod:`lgip_dataset.perturb`, never its sibling :mod:`lgip_dataset.sources` nor the
rooms above.
"""
