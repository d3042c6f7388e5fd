"""Blind judging of flips, from a build to a label store and back into builds (``lgip judge``, ``lgip build
--judged``, ``lgip evaluate --validated``; docs/judging.md walks through it).

1. :func:`draw` takes flips of a built folder in a seeded order (a sample, or every flip of some types; leaving
   out what a store holds twice, or taking only the store's disputed flips), :func:`split` deals them onto
   sheets and :func:`blind_sheet` writes each as text A / text B, with a key that unblinds it.
2. A judge writes one label file per sheet (:func:`read_labels`: ``<item>\\t<label>\\t<reason>``, a label of
   :data:`LABELS`); :func:`merge` adds the labels to a label store (:mod:`~lgip_dataset.judging.store`).
3. :func:`judged_counts` and :func:`report_markdown` count the majority labels (:func:`majority`) per type with
   Clopper-Pearson intervals and the judges' :func:`agreement`.
4. A build applies stores (:class:`LabelStores`) into the ``judged`` column of ``pairs`` and writes the rows
   the validated rule keeps (:func:`validated`) into the ``validated`` config; ``lgip evaluate --validated``
   scores those rows.

Each module has one job: :mod:`.labels` (the labels, majority, label files), :mod:`.store`, :mod:`.draw`,
:mod:`.report` and :mod:`.builds`; this package gives their public names.

It may import the top-level modules of :mod:`lgip_dataset`, :mod:`lgip_dataset.files`, :mod:`lgip_dataset.records`,
:mod:`lgip_dataset.perturb`, :mod:`lgip_dataset.sources` and :mod:`lgip_dataset.selection` (the validated rule
chooses as the build's hard flips are chosen); :mod:`lgip_dataset.writing` and :mod:`lgip_dataset.commands` sit above
it.
"""
from lgip_dataset.judging.draw import (blind_sheet, draw, first_is_original, folder_flips, key_text, rank, read_key,
                                       sheet_name, split)
from lgip_dataset.judging.labels import LABELS, VALID, disputed, judged_record, majority, read_labels
from lgip_dataset.judging.report import agreement, clopper_pearson, judged_counts, records_of, report_markdown
from lgip_dataset.judging.store import (SHIPPED_STORE, check_store_name, default_stores, merge, read_store,
                                        store_lock, write_store)
from lgip_dataset.judging.builds import RULE, LabelStores, validated, validated_mask

__all__ = ["LABELS", "RULE", "SHIPPED_STORE", "VALID", "LabelStores", "agreement", "blind_sheet", "check_store_name",
           "clopper_pearson", "default_stores", "disputed", "draw", "first_is_original", "folder_flips",
           "judged_counts", "judged_record", "key_text", "majority", "merge", "rank", "read_key", "read_labels",
           "read_store", "records_of", "report_markdown", "sheet_name", "split", "store_lock", "validated", "validated_mask",
           "write_store"]
