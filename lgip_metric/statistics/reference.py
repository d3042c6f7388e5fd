"""The paper's published LGIP numbers, quoted verbatim, for reports and the Space.

These are NOT computed by this package: they are Table 1 (global flip set) and Table 2 (per flip
type) of Lee, "Language-Guided Invariance Probing of Vision-Language Models", on 40,000 MS COCO
training images x 5 captions with K_same = K_diff = 6. Every consumer labels them as quoted.
The values are keyed by registry name; each model's paper row, backend, identifier and
pretrained tag come from the model registry.
"""
from __future__ import annotations

from lgip_metric.models.registry import REGISTRY

LABEL = "paper (quoted)"

# registry name -> (E_inv, E_sens, PR)
_TABLE_1 = {
    "clip-vit-b16": (0.008, 0.024, 0.866),
    "clip-vit-l14": (0.009, 0.027, 0.873),
    "openclip-vit-l14-laion2b": (0.008, 0.046, 0.898),
    "openclip-vit-h14-laion2b": (0.010, 0.050, 0.908),
    "eva02-l14": (0.005, 0.030, 0.896),
    "siglip-b16-224": (0.055, -0.017, 0.474),
    "siglip-b16-384": (0.058, -0.021, 0.464),
    "siglip-l16-384": (0.013, 0.002, 0.538),
    "siglip2-b16-224": (0.041, 0.008, 0.649),
}

# registry name -> flip type -> (E_sens "gap", PR)
_TABLE_2 = {
    "clip-vit-b16": {"object": (0.037, 0.955), "color": (0.015, 0.827), "count": (0.004, 0.665)},
    "eva02-l14": {"object": (0.043, 0.956), "color": (0.021, 0.869), "count": (0.010, 0.765)},
    "siglip-b16-224": {"object": (-0.017, 0.466), "color": (-0.017, 0.477), "count": (-0.016, 0.493)},
    "siglip2-b16-224": {"object": (0.011, 0.695), "color": (0.006, 0.608), "count": (0.006, 0.607)},
}


def table1() -> list[dict]:
    """Table 1 rows: model (the paper's row name), name (registry), backend, identifier,
    pretrained, E_inv, E_sens, PR, source."""
    rows = []
    for name, (e_inv, e_sens, pr) in _TABLE_1.items():
        spec = REGISTRY[name]
        rows.append({"model": spec.paper_row, "name": name, "backend": spec.backend, "identifier": spec.identifier,
                     "pretrained": spec.pretrained, "E_inv": e_inv, "E_sens": e_sens, "PR": pr, "source": LABEL})
    return rows


def table2() -> list[dict]:
    """Table 2 rows: model (the paper's row name), name (registry), then per flip type
    ``{type: {"E_sens": gap, "PR": pr}}``, source."""
    return [
        {"model": REGISTRY[name].paper_row, "name": name,
         "per_type": {t: {"E_sens": gap, "PR": pr} for t, (gap, pr) in types.items()}, "source": LABEL}
        for name, types in _TABLE_2.items()
    ]
