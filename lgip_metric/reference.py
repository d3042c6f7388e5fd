"""The paper's published LGIP numbers, quoted verbatim (SPEC section 1), for reports and the Space.

These are NOT computed by this package: they are Table 1 (global flip set) and Table 2 (per flip
type) of Lee, "Language-Guided Invariance Probing of Vision-Language Models", on 40,000 MS COCO
training images x 5 captions with K_same = K_diff = 6. Every consumer labels them as quoted.
"""
from __future__ import annotations

LABEL = "paper (quoted)"

# (paper row, backend, identifier, pretrained, E_inv, E_sens, PR)
_TABLE_1 = (
    ("CLIP ViT-B/16 (OpenAI)", "open_clip", "ViT-B-16-quickgelu", "openai", 0.008, 0.024, 0.866),
    ("CLIP ViT-L/14 (OpenAI)", "open_clip", "ViT-L-14-quickgelu", "openai", 0.009, 0.027, 0.873),
    ("OpenCLIP ViT-L/14 (LAION-2B)", "open_clip", "ViT-L-14", "laion2b_s32b_b82k", 0.008, 0.046, 0.898),
    ("OpenCLIP ViT-H/14 (LAION-2B)", "open_clip", "ViT-H-14", "laion2b_s32b_b79k", 0.010, 0.050, 0.908),
    ("EVA02-CLIP L/14", "open_clip", "EVA02-L-14", "merged2b_s4b_b131k", 0.005, 0.030, 0.896),
    ("SigLIP base-p16-224", "transformers", "google/siglip-base-patch16-224", None, 0.055, -0.017, 0.474),
    ("SigLIP base-p16-384", "transformers", "google/siglip-base-patch16-384", None, 0.058, -0.021, 0.464),
    ("SigLIP large-p16-384", "transformers", "google/siglip-large-patch16-384", None, 0.013, 0.002, 0.538),
    ("SigLIP2 base-p16-224", "transformers", "google/siglip2-base-patch16-224", None, 0.041, 0.008, 0.649),
)

# paper row -> flip type -> (E_sens "gap", PR)
_TABLE_2 = {
    "CLIP ViT-B/16 (OpenAI)": {"object": (0.037, 0.955), "color": (0.015, 0.827), "count": (0.004, 0.665)},
    "EVA02-CLIP L/14": {"object": (0.043, 0.956), "color": (0.021, 0.869), "count": (0.010, 0.765)},
    "SigLIP base-p16-224": {"object": (-0.017, 0.466), "color": (-0.017, 0.477), "count": (-0.016, 0.493)},
    "SigLIP2 base-p16-224": {"object": (0.011, 0.695), "color": (0.006, 0.608), "count": (0.006, 0.607)},
}


def table1() -> list[dict]:
    """Table 1 rows: model, backend, identifier, pretrained, E_inv, E_sens, PR, source."""
    keys = ("model", "backend", "identifier", "pretrained", "E_inv", "E_sens", "PR")
    return [{**dict(zip(keys, row)), "source": LABEL} for row in _TABLE_1]


def table2() -> list[dict]:
    """Table 2 rows: model, then per flip type ``{type: {"E_sens": gap, "PR": pr}}``, source."""
    return [
        {"model": model, "per_type": {t: {"E_sens": gap, "PR": pr} for t, (gap, pr) in types.items()},
         "source": LABEL}
        for model, types in _TABLE_2.items()
    ]
