"""Tree-packed text encoding: the trie layout, the plan, and packed features equal to the plain forward
(fp32, 1e-5) for random-weight open_clip ViT-B/16, an EVA02 text tower and a transformers CLIP; SigLIP
keeps its fixed-length path."""
from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import open_clip
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from lgip_metric.models import ModelSpec, load_model
from lgip_metric.models.tree_pack import pooled_position, shared_prefix, trie_size, tree_batch
from lgip_metric.scoring.distributed import Context
from lgip_metric.scoring.heap import CPU_MMAP_THRESHOLD_BYTES
from lgip_metric.scoring.texts import MIN_FILL, MIN_SHARED, pack_batches, pack_budget, plan_batches, tree_packs
from lgip_metric.testing import make_tiny_hf_clip, make_tiny_siglip

CAPTION = "A brown dog laying on the ground next to a red frisbee in a park."
TEXTS = [
    CAPTION,
    "A brown dog laying on the ground next to a blue frisbee in a park.",  # a flip: shares the prefix
    "A brown dog laying on the ground next to a red ball in a park.",
    "A brown dog laying on the ground",  # a prefix of the caption's words (its EOT differs)
    "A photo of a brown dog laying on the ground next to a red frisbee in a park.",  # template paraphrase
    "A photo of two cats.",
    "Un café très chaud, s'il vous plaît!",  # shares only the start token with the rest
    "two people standing in a room " * 14,  # past the 77-token context: truncated to 77 ids
    "two people standing in a room " * 12 + "with a cat",  # exactly 77 ids, sharing 73 with the one before
    "x",
]


def eva02_text_spec() -> ModelSpec:
    """EVA02-CLIP L/14's text tower (open_clip's own config, a CustomTextCLIP's ``.text``) beside a tiny
    non-timm image tower, with seeded random weights."""
    config = open_clip.get_model_config("EVA02-L-14")
    tiny_vision = {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 8}
    inline = {"embed_dim": config["embed_dim"], "vision_cfg": tiny_vision, "text_cfg": config["text_cfg"], "custom_text": True}
    return ModelSpec("eva02-text", "open_clip", "lgip-test-eva02-l14-text", random_weights=True, config=inline)


@pytest.fixture(scope="module", params=["open_clip ViT-B-16", "EVA02-L-14 text", "transformers CLIP", "transformers CLIP legacy eos"])
def encoder(request, tmp_path_factory):
    if request.param == "open_clip ViT-B-16":
        return load_model("random:ViT-B-16", device="cpu")
    if request.param == "EVA02-L-14 text":
        loaded = load_model(eva02_text_spec(), device="cpu")
        assert loaded.model.text is loaded._text  # the custom text tower is the one packed
        return loaded
    folder = Path(make_tiny_hf_clip(tmp_path_factory.mktemp("hf-clip")))
    if request.param.endswith("legacy eos"):  # configs from before transformers PR 24773 pool at the largest id
        config = json.loads((folder / "config.json").read_text())
        config["text_config"]["eos_token_id"] = 2
        (folder / "config.json").write_text(json.dumps(config))
    loaded = load_model(str(folder), device="cpu")
    assert loaded.pool_rule == (("argmax", None) if request.param.endswith("legacy eos") else ("eos", 49407))
    return loaded


def plain_features(encoder, texts: list[str]) -> torch.Tensor:
    """The tower's own forward, every text padded to the full context, as a user calls it."""
    with torch.inference_mode():
        if encoder.backend == "open_clip":
            return F.normalize(encoder.model.encode_text(encoder.tokenizer(texts)), dim=-1)
        tokens = encoder.tokenizer(texts, padding="max_length", max_length=77, truncation=True, return_tensors="pt")
        return F.normalize(encoder.model.get_text_features(**tokens).pooler_output, dim=-1)


def packed_features(encoder, texts: list[str], packs: list[list[int]]) -> torch.Tensor:
    """Features of ``texts`` from one tree batch of ``packs`` (lists of indices), back in text order."""
    ids = encoder.tokenize(texts)
    emb = encoder.encode_texts(encoder.tree_batch([[ids[i] for i in pack] for pack in packs]))
    out = torch.zeros_like(emb)
    out[[i for pack in packs for i in pack]] = emb
    return out


@pytest.mark.parametrize("layout", ["one pack", "packs of uneven size (padding)", "every text alone", "a single text"])
def test_packed_features_equal_the_plain_forward(encoder, layout):
    assert encoder.tree_packing and encoder.provenance()["text"]["tree_packing"].startswith("on:")
    texts = TEXTS[:1] if layout == "a single text" else TEXTS
    packs = {"one pack": [list(range(len(texts)))], "packs of uneven size (padding)": [[0, 1, 2, 3, 4, 5], [6], [7, 8, 9]],
             "every text alone": [[i] for i in range(len(texts))], "a single text": [[0]]}[layout]
    ids = encoder.tokenize(texts)
    if layout != "a single text":
        assert max(len(x) for x in ids) == 77 and sum(len(x) == 77 for x in ids) == 2  # two at the context limit
    packed, plain = packed_features(encoder, texts, packs), plain_features(encoder, texts)
    assert (packed - plain).abs().max() <= 1e-5
    if layout == "one pack":  # the prefixes are really shared: fewer nodes than tokens
        assert encoder.tree_batch([ids])["input_ids"].shape[1] == trie_size(ids) < sum(map(len, ids)) * 0.7


def mlp_rows(encoder, layers, batch) -> list[tuple[int, int]]:
    """The ``(packs, rows)`` each of ``layers``' MLP sees while ``encoder`` encodes ``batch``."""
    rows = []
    hooks = [layer.mlp.register_forward_hook(lambda module, args, out: rows.append(tuple(args[0].shape[:2])))
             for layer in layers]
    try:
        encoder.encode_texts(batch)
    finally:
        for hook in hooks:
            hook.remove()
    return rows


def test_open_clip_runs_its_last_block_at_the_pooled_nodes_alone(encoder):
    """open_clip's last block's MLP sees one row per text of a pack (its pooled node), the other blocks every
    node; transformers CLIP layers all see every node."""
    ids = encoder.tokenize(TEXTS)
    batch = encoder.tree_batch([ids[:5], ids[5:]])
    layers = encoder.text_tower.resblocks if encoder.backend == "open_clip" else encoder.text_tower.encoder.layers
    rows = mlp_rows(encoder, layers, batch)
    nodes = batch["input_ids"].shape[1]
    last = (2, 5) if encoder.backend == "open_clip" else (2, nodes)  # 2 packs, at most 5 texts each
    assert rows == [(2, nodes)] * (len(layers) - 1) + [last] and nodes > 5


def test_open_clip_towers_of_custom_blocks_pack_and_run_their_last_block_whole():
    """A tower of open_clip's CustomResidualAttentionBlock (qk_norm) packs exactly; its last block sees every node."""
    text_cfg = {**open_clip.get_model_config("ViT-B-16")["text_cfg"], "qk_norm": True, "layers": 2, "width": 64, "heads": 2}
    vision_cfg = {"image_size": 32, "layers": 1, "width": 64, "head_width": 32, "patch_size": 8}
    encoder = load_model(ModelSpec("custom-blocks", "open_clip", "lgip-test-custom-blocks", random_weights=True,
                                   config={"embed_dim": 32, "vision_cfg": vision_cfg, "text_cfg": text_cfg}), device="cpu")
    assert type(encoder.text_tower.resblocks[-1]).__name__ == "CustomResidualAttentionBlock" and encoder.tree_packing
    packs = [[0, 1, 2, 3, 4, 5], [6], [7, 8, 9]]
    assert (packed_features(encoder, TEXTS, packs) - plain_features(encoder, TEXTS)).abs().max() <= 1e-5
    batch = encoder.tree_batch([encoder.tokenize(TEXTS)])
    assert mlp_rows(encoder, encoder.text_tower.resblocks[-1:], batch) == [tuple(batch["input_ids"].shape)]


def test_siglip_is_never_packed(tmp_path):
    encoder = load_model(make_tiny_siglip(tmp_path / "siglip"), device="cpu")
    assert not encoder.tree_packing and not encoder.dynamic_padding
    assert encoder.provenance()["text"]["tree_packing"] == "off: the siglip text tower is bidirectional: every token sees the whole text"


def test_turned_off_is_recorded_and_changes_the_cache_identity():
    on, off = load_model("random:tiny-clip", device="cpu"), load_model("random:tiny-clip", device="cpu", tree_packing=False)
    assert on.tree_packing and not off.tree_packing
    assert off.provenance()["text"]["tree_packing"].startswith("off: turned off")
    assert on.fingerprint() != off.fingerprint()


token_lists = st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=6), min_size=1, max_size=8)


@given(token_lists)
def test_tree_batch_lays_out_each_distinct_prefix_once_with_its_ancestors(texts):
    texts = [[0, *ids, 5] for ids in texts]  # a start token, an EOT (the largest id) that ends each text
    batch = tree_batch([texts], "argmax", None)
    tokens, positions, mask = batch["input_ids"][0], batch["position_ids"][0], batch["tree_mask"][0]
    prefixes = {tuple(ids[: n + 1]) for ids in texts for n in range(len(ids))}
    assert len(tokens) == len(prefixes) == trie_size(texts)
    node_of = {}
    for ids in texts:
        for n in range(len(ids)):
            seen = [node for node in range(len(tokens)) if positions[node] == n and tokens[node] == ids[n]
                    and all(mask[node, node_of[tuple(ids[: k + 1])]] for k in range(n))]
            assert len(seen) == 1  # exactly one node per prefix, which sees all of the prefix's nodes
            node_of[tuple(ids[: n + 1])] = seen[0]
    for prefix, node in node_of.items():  # and sees nothing else
        assert int(mask[node].sum()) == len(prefix)
    assert batch["pooled_index"].tolist() == [node_of[tuple(ids)] for ids in texts]
    assert batch["pooled_nodes"].flatten()[batch["pooled_slot"]].equal(batch["pooled_index"])  # one pack: the same nodes


def test_tree_batch_pads_packs_with_nodes_no_text_sees():
    batch = tree_batch([[[3, 1, 5], [3, 1, 2, 5]], [[3, 5]]], "argmax", None)
    assert batch["input_ids"].tolist() == [[3, 1, 5, 2, 5], [3, 5, 0, 0, 0]]
    assert batch["position_ids"].tolist() == [[0, 1, 2, 2, 3], [0, 1, 0, 0, 0]]
    assert batch["pooled_index"].tolist() == [2, 4, 6]
    assert batch["pooled_nodes"].tolist() == [[2, 4], [1, 1]] and batch["pooled_slot"].tolist() == [0, 1, 2]
    assert not batch["tree_mask"][1, :2, 2:].any() and batch["tree_mask"][1, 2:, 2:].equal(torch.eye(3, dtype=torch.bool))


def test_pooled_position_follows_the_towers_rule():
    assert pooled_position([1, 3, 7, 5, 7], "argmax", None) == 2  # the first largest id
    assert pooled_position([1, 3, 5, 7, 5], "eos", 5) == 2  # the first eos
    assert pooled_position([1, 3], "eos", 5) == 0  # none: argmax of a zero row
    assert tree_batch([[[1, 3, 5, 7, 5]]], "eos", 5)["input_ids"].shape == (1, 3)  # nodes after it left out


@given(st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=9), min_size=1, max_size=40), st.integers(9, 30),
       st.integers(1, 60))
def test_the_plan_packs_every_text_once_within_its_budgets(texts, pack_tokens, batch_tokens):
    texts = sorted([1, *ids] for ids in texts)  # sorted, as the engine plans them
    lengths = [len(ids) for ids in texts]
    shared = [0] + [shared_prefix(a, b) for a, b in zip(texts, texts[1:])]
    packs, nodes = tree_packs(lengths, shared, pack_tokens)
    assert np.array_equal(np.concatenate(packs), np.arange(len(texts)))  # consecutive, each text once
    for pack, bound in zip(packs, nodes):
        assert trie_size([texts[i] for i in pack]) <= bound
        assert bound <= pack_tokens or len(pack) == 1
        assert all(shared[i] >= MIN_SHARED for i in pack[1:])
    batches = pack_batches(packs, nodes, batch_tokens)
    assert sorted(int(p[0]) for p in itertools.chain(*batches)) == [int(p[0]) for p in packs]
    index = {int(p[0]): k for k, p in enumerate(packs)}
    for batch in batches:
        widths = [nodes[index[int(p[0])]] for p in batch]
        assert len(batch) * max(widths) <= batch_tokens or len(batch) == 1
        assert min(widths) >= MIN_FILL * max(widths)  # padding stays below a quarter of the batch


def test_cpu_packed_batches_keep_each_activation_below_the_mmap_threshold(encoder):
    """A CPU layer's widest activation (the MLP's hidden layer) over a packed batch stays a heap block:
    ViT-B/16's 2,048-wide MLP is 8 KiB a token in fp32, so a batch as wide as the plain path's (batch
    size x longest text, 4,928 tokens here) would be mapped and faulted in afresh in every layer."""
    texts = [f"{t} {k}" for k in range(200) for t in TEXTS[:9]]
    batches, tokens = plan_batches(encoder, texts, np.arange(len(texts)), 64, Context(), False, 0)
    ids = encoder.tokenize(texts)
    assert [tokens.ids(i) for i in range(len(texts))] == ids  # each text tokenised once, its ids kept
    assert sorted(int(i) for batch in batches for pack in batch for i in pack) == list(range(len(texts)))
    plain_tokens = 64 * max(map(len, ids))
    budget = pack_budget(encoder, plain_tokens)
    assert encoder.text_token_bytes == 4 * max(m.out_features for m in encoder.text_tower.modules()
                                                if isinstance(m, torch.nn.Linear))
    for batch in batches:
        nodes = encoder.tree_batch([[ids[i] for i in pack] for pack in batch])["input_ids"].numel()
        assert nodes <= budget and (nodes * encoder.text_token_bytes < CPU_MMAP_THRESHOLD_BYTES or len(batch) == 1)
    if encoder.model_id == "open_clip:ViT-B-16":  # the real ViT-B/16 text tower (its MLP 2,048 wide)
        assert encoder.text_token_bytes == 2048 * 4 and budget == 4095 < plain_tokens
        assert len(batches) > 1
    gpu = SimpleNamespace(device=torch.device("cuda"), text_token_bytes=encoder.text_token_bytes)
    assert pack_budget(gpu, plain_tokens) == plain_tokens  # GPU plans are the plain path's width
