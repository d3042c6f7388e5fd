"""The writing of a build: a Hub-layout LGIP folder, its card, and the export to other harnesses' layouts.

:mod:`.materialize` builds the folder (``lgip build``: read, perturb, choose, judge, write the shards and the build
record, staged and moved into place when complete), spreading per-caption work over workers with :mod:`.parallel`;
:mod:`.card` writes its dataset card; :mod:`.export_sugarcrepe` writes a build's flips in SugarCrepe's layout
(``lgip export``).

It may import every other room of :mod:`lgip_dataset` except :mod:`lgip_dataset.commands`, which is above it.
"""
