"""The readers of a build's inputs, each into the same records (:class:`~.coco.ImageEntry` per image).

:mod:`.coco` reads COCO and Karpathy caption files; :mod:`.sugarcrepe` SugarCrepe-format probe sets;
:mod:`.imagefolder` a user's own images and captions; :mod:`.saved_dataset` a local ``datasets`` dataset;
:mod:`.statistics_captions` the caption files a build adds to the hard flips' statistics; :mod:`.skips` counts
every input row a reader leaves out or cleans, with its reason.

It may import the top-level modules of :mod:`lgip_dataset`, :mod:`lgip_dataset.files`, :mod:`lgip_dataset.records`
and :mod:`lgip_dataset.perturb` (whose caption limit and imported flip types it reads), never its sibling
:mod:`lgip_dataset.selection` nor the rooms above.
"""
