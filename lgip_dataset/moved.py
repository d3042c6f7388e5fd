"""The modules of lgip_dataset that moved into its sub-packages after 0.2.0, old name to new name.

``import lgip_dataset.coco`` or ``from lgip_dataset.balance import choose`` still works, for one release, with a
``DeprecationWarning`` naming the new place (:mod:`lgip_dataset.old_names`; ``import lgip_dataset`` installs it).
"""
from __future__ import annotations

_INTO = {
    "files": ("atomic", "hub_io", "image_cells", "image_map", "images", "locks"),
    "records": ("figures", "held_out_reference"),
    "sources": ("coco", "imagefolder", "saved_dataset", "skips", "statistics_captions", "sugarcrepe"),
    "selection": ("adversary", "balance", "balance_program", "context_typicality", "groups", "measurable"),
    "writing": ("card", "export_sugarcrepe", "materialize", "parallel"),
}
MOVED = {f"lgip_dataset.{name}": f"lgip_dataset.{room}.{name}" for room, names in _INTO.items() for name in names}
