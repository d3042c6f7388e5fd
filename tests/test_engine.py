"""The scoring engine on tiny real models and real COCO images: parity, unique encodes, bad rows."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import uuid

import numpy as np
import open_clip
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

from lgip_dataset import schema
from lgip_dataset.errors import DataError, LGIPError
from lgip_metric.scoring.engine import score_dataset
from lgip_dataset import SAMPLE_DIR
from lgip_metric.scoring import engine
from lgip_metric.scoring import join as join_module
from lgip_metric.scoring import texts as texts_module
from lgip_metric.scoring.join import ScoreJoin
from lgip_metric.testing import make_tiny_dataset, make_tiny_openclip, make_tiny_siglip, same_scores, straightforward_scores


def unique(folder):
    """A fresh folder name: `datasets` caches local folders by name (see the note in the report)."""
    return folder / f"lgip-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, sample_coco_dir):
    return make_tiny_dataset(unique(tmp_path_factory.mktemp("data")), sample_coco_dir)


@pytest.fixture(scope="module")
def openclip_model(tmp_path_factory):
    return make_tiny_openclip(tmp_path_factory.mktemp("openclip"))


@pytest.fixture(scope="module")
def siglip_model(tmp_path_factory, sample_coco_dir):
    annotations = json.loads((sample_coco_dir / "annotations" / "captions_val2017.json").read_text(encoding="utf-8"))
    captions = [a["caption"].strip() for a in annotations["annotations"][:3000]]
    return make_tiny_siglip(tmp_path_factory.mktemp("siglip"), captions=captions)


def read_config(folder, config):
    return pq.read_table(next((folder / config).glob("*.parquet"))).to_pylist()


def decodable(data: bytes) -> Image.Image | None:
    try:
        return Image.open(io.BytesIO(data)).convert("RGB")
    except OSError:
        return None


def reference_scores(model: str, folder) -> dict[str, tuple[float, float]]:
    """Per-pair fp32 scores computed the plain way: one image and one text at a time, full padding."""
    if model.startswith("local-dir:"):
        net, _, preprocess = open_clip.create_model_and_transforms(model)
        tokenizer = open_clip.get_tokenizer(model)
        net.eval()

        def image_emb(image):
            return net.encode_image(preprocess(image)[None])

        def text_emb(text):
            return net.encode_text(tokenizer([text]))  # padded to the full 77-token context
    else:
        from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

        net = AutoModel.from_pretrained(model).eval()
        tokenizer = AutoTokenizer.from_pretrained(model)
        processor = AutoImageProcessor.from_pretrained(model, backend="pil")

        def image_emb(image):
            return net.get_image_features(**processor(images=[image], return_tensors="pt")).pooler_output

        def text_emb(text):
            ids = tokenizer([text], padding="max_length", max_length=64, truncation=True, return_tensors="pt")
            return net.get_text_features(input_ids=ids["input_ids"]).pooler_output

    images = {row["image_id"]: decodable(row["image"]["bytes"]) for row in read_config(folder, schema.IMAGES)}
    out = {}
    with torch.no_grad():
        for row in read_config(folder, schema.PAIRS):
            if images.get(row["image_id"]) is None:
                continue
            i = F.normalize(image_emb(images[row["image_id"]]), dim=-1)
            c = F.normalize(text_emb(row["caption"]), dim=-1)
            v = F.normalize(text_emb(row["variant"]), dim=-1)
            out[row["row_id"]] = (float((i * c).sum()), float((i * v).sum()))
    return out


@pytest.mark.parametrize("which", ["openclip", "siglip"])
def test_engine_equals_per_pair_reference(which, dataset, openclip_model, siglip_model, tmp_path):
    model = openclip_model if which == "openclip" else siglip_model
    run = score_dataset(model, dataset, tmp_path / "out", cache_dir="none", batch_size=64, num_workers=0, progress=False)
    scores = run.scores()
    expected = reference_scores(model, dataset)
    assert list(scores["row_id"]) == [r for r in (x["row_id"] for x in read_config(dataset, schema.PAIRS)) if r in expected]
    got = np.array(list(zip(scores["s_original"], scores["s_variant"])))
    want = np.array([expected[r] for r in scores["row_id"]])
    assert np.abs(got - want).max() < 1e-5
    lengths = {len(v) for v in scores["variant"]}
    assert max(lengths) > 300 and min(lengths) < 60  # very different lengths, one batch of 64
    assert run.provenance.backend == ("open_clip" if which == "openclip" else "transformers")


def test_output_files_and_provenance(dataset, tmp_path):
    run = score_dataset("random:tiny-clip", dataset, tmp_path / "out", cache_dir="none", batch_size=8, num_workers=0, progress=False)
    table = pq.read_table(run.scores_path)
    assert tuple(table.column_names) == schema.SCORE_COLUMNS
    assert table.schema.field("s_original").type == pa.float64() == table.schema.field("s_variant").type
    p = run.provenance.to_dict()
    assert p == json.loads(run.provenance_path.read_text())
    assert p["random_weights"] is True and "RANDOM WEIGHTS" in p["note"] and p["pretrained"] is None
    assert p["model"] == "random:tiny-clip" and p["model_id"] == "open_clip:lgip-tiny-clip"
    assert {"tokenizer", "context_length", "padding", "normalisation"} <= set(p["text"])
    assert {"size", "mean", "std", "interpolation"} <= set(p["image"])
    assert {"torch", "open_clip", "transformers", "datasets"} <= set(p["libraries"])
    assert {"source", "config", "fingerprint", "seed", "lexicon_version"} <= set(p["dataset"])
    assert {"load_model_s", "images_s", "texts_s", "total_s"} <= set(p["timing"])
    assert p["scores"]["sha256"] == hashlib.sha256(run.scores_path.read_bytes()).hexdigest()  # hashed while written
    pairs = read_config(dataset, schema.PAIRS)
    texts = {r["caption"] for r in pairs} | {r["variant"] for r in pairs}
    counts = p["counts"]
    assert counts["unique_texts"] == counts["encoded_texts"] == len(texts)  # each text encoded once
    assert counts["unique_images"] == 5 and counts["encoded_images"] == 4  # each image once; one corrupt
    assert not list(tmp_path.glob("out/.*.tmp"))


def test_corrupt_and_missing_images_are_counted_and_the_rest_scored(dataset, tmp_path):
    folder = unique(tmp_path)
    shutil.copytree(dataset, folder)
    shard = next((folder / schema.PAIRS).glob("*.parquet"))
    table = pq.read_table(shard)
    ids = table.column("image_id").to_pylist()
    ids[:2] = [2, 2]  # two rows whose image is not in the images config
    pq.write_table(table.set_column(table.schema.get_field_index("image_id"), "image_id", pa.array(ids, pa.int64())), shard)
    run = score_dataset("random:tiny-clip", folder, tmp_path / "out", cache_dir="none", num_workers=0, progress=False)
    counts = run.provenance.counts
    skipped = {s["image_id"]: s for s in counts["skipped_images"]}
    assert set(skipped) == {1, 2}
    assert skipped[1]["rows"] == 4 and "corrupt or unreadable image" in skipped[1]["reason"]
    assert skipped[2]["rows"] == 2 and "not in the images config" in skipped[2]["reason"]
    assert counts["skipped_rows"] == 6 and counts["scored_rows"] == counts["rows"] - 6
    scores = run.scores()
    assert len(scores) == counts["scored_rows"] and not set(scores["image_id"]) & {1, 2}
    assert np.isfinite(scores[["s_original", "s_variant"]].to_numpy()).all()


def test_decode_workers_give_the_same_scores(dataset, tmp_path):
    kwargs = dict(cache_dir="none", batch_size=2, progress=False)
    serial = score_dataset("random:tiny-clip", dataset, tmp_path / "a", num_workers=0, **kwargs).scores()
    parallel = score_dataset("random:tiny-clip", dataset, tmp_path / "b", num_workers=2, **kwargs).scores()
    assert serial.equals(parallel)


def test_autocast_precision_is_opt_in_and_close(dataset, tmp_path):
    fp32 = score_dataset("random:tiny-clip", dataset, tmp_path / "a", cache_dir="none", num_workers=0, progress=False)
    bf16 = score_dataset("random:tiny-clip", dataset, tmp_path / "b", cache_dir="none", num_workers=0, progress=False,
                         precision="bf16")
    assert fp32.provenance.precision == "fp32" and bf16.provenance.precision == "bf16"
    drift = np.abs(fp32.scores()["s_variant"].to_numpy() - bf16.scores()["s_variant"].to_numpy())
    assert 0 < drift.max() < 0.05


def test_limit_scores_the_first_rows(dataset, tmp_path):
    run = score_dataset("random:tiny-clip", dataset, tmp_path / "out", cache_dir="none", num_workers=0, progress=False, limit=5)
    assert run.provenance.counts["rows"] == 5 and len(run.scores()) == 5


def test_rows_changed_while_scoring_are_refused_not_written(dataset, tmp_path, monkeypatch):
    """The rows are read again to be written: a config rewritten meanwhile is an error, not misaligned scores."""
    folder = unique(tmp_path)
    shutil.copytree(dataset, folder)
    shard = next((folder / schema.PAIRS).glob("*.parquet"))
    find_texts = engine.unique_texts

    def rewriting(rows, *args):
        found = find_texts(rows, *args)
        table = pq.read_table(shard)
        pq.write_table(table.set_column(table.schema.get_field_index("caption"), "caption",
                                        pa.array(["another caption"] * table.num_rows)), shard)
        return found

    monkeypatch.setattr(engine, "unique_texts", rewriting)
    with pytest.raises(LGIPError, match=r"config 'pairs' of .* changed while it was scored; score it again"):
        score_dataset("random:tiny-clip", folder, tmp_path / "out", cache_dir="none", num_workers=0, progress=False)
    assert not (tmp_path / "out" / "scores.parquet").exists()


def test_dataset_without_the_config_is_a_clear_error(dataset, tmp_path):
    folder = unique(tmp_path)
    shutil.copytree(dataset / schema.IMAGES, folder / schema.IMAGES)
    with pytest.raises(DataError, match=r"no parquet files for config 'pairs'"):
        score_dataset("random:tiny-clip", folder, tmp_path / "out", cache_dir="none", progress=False)
    with pytest.raises(DataError, match="lacks the columns"):
        score_dataset("random:tiny-clip", dataset, tmp_path / "out", config=schema.IMAGES, cache_dir="none", progress=False)


@pytest.mark.parametrize("workers", [0, 2])
def test_image_batches_come_whole_from_pieces_decoded_by_workers(workers, monkeypatch):
    """Workers decode each batch in pieces; the batch comes back exactly as one collate of its items would
    make it (failures and all), in order."""
    from lgip_metric.scoring import image_data

    class Items(torch.utils.data.Dataset):
        def __len__(self):
            return 23

        def __getitem__(self, i):
            if i % 5 == 3:
                return i, None, f"bad {i}", False
            return i, {"pixel_values": torch.full((3, 2, 2), float(i))}, "", i % 2 == 0  # even ones from kept pixels

    monkeypatch.setattr(image_data, "PIECE_IMAGES", 3)
    batches = [[0, 1, 2, 3, 4, 5, 6], [7], [8, 9, 10, 11, 12, 13, 14, 15, 16, 17], [18, 19, 20, 21, 22]]
    got = list(image_data.image_batches(Items(), batches, workers, torch.device("cpu")))
    assert len(got) == len(batches)
    for (done, batch, failed, kept), items in zip(got, batches):
        want = image_data.collate([Items()[i] for i in items])
        assert done == want[0] and failed == want[2] and torch.equal(batch["pixel_values"], want[1]["pixel_values"])
        assert kept == want[3] == sum(i % 2 == 0 and i % 5 != 3 for i in items)
    only_bad = list(image_data.image_batches(Items(), [[3, 8, 13]], workers, torch.device("cpu")))
    assert only_bad == [([], None, [(3, "bad 3"), (8, "bad 8"), (13, "bad 13")], 0)]


def test_decode_refuses_bombs_and_empty_cells():
    from lgip_dataset.files.images import ImageError
    from lgip_metric.scoring.image_data import cell_image

    buffer = io.BytesIO()
    Image.new("1", (10_000, 10_000)).save(buffer, format="PNG")  # 100 M pixels in a few KB
    with pytest.raises(ImageError, match="too large|decompression bomb"):
        cell_image({"bytes": buffer.getvalue(), "path": None})
    with pytest.raises(ImageError, match="no image bytes"):
        cell_image({"bytes": None, "path": None})
    with pytest.raises(ImageError, match="no image bytes"):  # a path is never read: keys are of embedded bytes
        cell_image({"bytes": None, "path": __file__})
    with pytest.raises(ImageError, match="corrupt or unreadable"):
        cell_image({"bytes": b"not a jpeg", "path": None})


@pytest.mark.parametrize("batch_size", [3, 64])
def test_streamed_engine_equals_straightforward_scores_bit_for_bit(dataset, batch_size, tmp_path):
    run = score_dataset("random:tiny-clip", dataset, tmp_path / "out", cache_dir="none", batch_size=batch_size,
                        num_workers=0, progress=False, tree_packing=False)
    assert run.provenance.text["tree_packing"].startswith("off: turned off")
    assert same_scores(run.scores(), straightforward_scores("random:tiny-clip", dataset, batch_size))


@pytest.mark.parametrize("batch_size", [3, 64])
def test_tree_packed_engine_equals_straightforward_scores(dataset, batch_size, tmp_path, monkeypatch):
    """On by default: each distinct token prefix encoded once, every score within 1e-6 of the plain
    forward's and every decision the same; every text still counted as encoded once."""
    packed, plan = [], texts_module.pack_batches
    monkeypatch.setattr(texts_module, "pack_batches", lambda *args: packed.append(plan(*args)) or packed[-1])
    run = score_dataset("random:tiny-clip", dataset, tmp_path / "out", cache_dir="none", batch_size=batch_size,
                        num_workers=0, progress=False)
    assert run.provenance.text["tree_packing"].startswith("on:")
    assert any(len(pack) > 1 for batch in packed[0] for pack in batch)  # texts really shared a sequence
    scores, plain = run.scores(), straightforward_scores("random:tiny-clip", dataset, batch_size)
    assert list(scores["row_id"]) == list(plain["row_id"])
    for column in ("s_original", "s_variant", "t_sim"):
        assert np.abs(scores[column].to_numpy() - plain[column].to_numpy()).max() <= 1e-6, column
    assert np.array_equal(scores["s_original"] > scores["s_variant"], plain["s_original"] > plain["s_variant"])
    assert run.provenance.counts["encoded_texts"] == run.provenance.counts["unique_texts"]


@pytest.mark.parametrize("tree_packing", [False, True])
def test_the_join_keeps_few_text_embeddings_at_once(tree_packing, tmp_path, monkeypatch):
    """On the embedded sample, length-sorted batches make a text wait only for partners of nearly its length;
    tree packs (a caption with its flips in one pack, batches of about 200 texts here) hold more at once, but
    still lets go of most texts as soon as their rows are scored."""
    held, add = [], ScoreJoin.add

    def recording(self, positions, emb):
        add(self, positions, emb)
        held.append(self.held())

    monkeypatch.setattr(ScoreJoin, "add", recording)
    run = score_dataset("random:tiny-clip", SAMPLE_DIR, tmp_path / "out", cache_dir="none", num_workers=0, progress=False,
                        tree_packing=tree_packing)
    assert held[-1] == 0  # every row scored, nothing left behind
    assert max(held) < run.provenance.counts["unique_texts"] / (4 if tree_packing else 10)


@pytest.mark.parametrize("block_rows,bank_rows", [(None, None), (1, 4), (3, 7)])  # None: one block each
def test_join_equals_one_product_in_any_arrival_order(block_rows, bank_rows, monkeypatch):
    if block_rows is not None:  # rows scored a few at a time, and kept in many small blocks, give the same values
        monkeypatch.setattr(join_module, "BLOCK_BYTES", 8 * 16 * block_rows)
        monkeypatch.setattr(join_module, "BLOCK_ROWS", bank_rows)
    rng = np.random.default_rng(0)
    images = F.normalize(torch.randn(5, 16), dim=-1)
    texts = F.normalize(torch.randn(40, 16), dim=-1)
    img, left, right = rng.integers(0, 5, 300), rng.integers(0, 40, 300), rng.integers(0, 40, 300)
    want_image = (images[img].double() * texts[left].double()).sum(dim=1).numpy()
    want_text = (texts[left].double() * texts[right].double()).sum(dim=1).numpy()
    for chunk in (1, 7, 40):
        arrival = rng.permutation(40)
        join = ScoreJoin(images, 40, {"s": (img, left)}, (left, right))
        for start in range(0, 40, chunk):
            positions = arrival[start : start + chunk]
            join.add(positions, texts[positions])
        assert np.array_equal(join.values["s"], want_image) and np.array_equal(join.values["text"], want_text)
        assert join.held() == 0



@pytest.mark.parametrize("which", ["openclip", "siglip"])
def test_an_encoder_pickled_for_spawned_workers_makes_the_same_text_inputs(which, openclip_model, siglip_model):
    """Under the spawn start method DataLoader workers get a pickled encoder: it travels without its
    modules and tokenises and pads exactly as the original."""
    import pickle

    from lgip_metric.models import load_model
    from lgip_metric.scoring.texts import TokenIds, _BatchInputs, _CountChunks

    encoder = load_model({"openclip": openclip_model, "siglip": siglip_model}[which])
    travelled = pickle.loads(pickle.dumps(encoder))
    assert not any(isinstance(v, torch.nn.Module) for v in vars(travelled).values())
    texts = ["a cat on a mat", "two dogs", "A RED BUS PARKED NEXT TO A TALL BUILDING", "x"] * 3
    batches = [np.array([0, 2, 5]), np.array([1, 3]), np.arange(6, 12)]
    for i in range(len(batches)):
        mine, theirs = _BatchInputs(encoder, texts, batches)[i], _BatchInputs(travelled, texts, batches)[i]
        assert mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in mine)
    ids = encoder.tokenize(texts)
    flat, lengths = _CountChunks(travelled, texts, [0])[0]
    assert np.array_equal(lengths, [len(x) for x in ids]) and flat.tolist() == [t for x in ids for t in x]
    packs = [[np.array([0, 4]), np.array([2])], np.array([1, 3])]
    tokens = TokenIds(len(texts), np.arange(len(texts)), [(flat, lengths)])
    for i, travelled_inputs in enumerate(_BatchInputs(travelled, texts, packs)):  # tree-packed and padded alike
        for mine in (_BatchInputs(encoder, texts, packs)[i], _BatchInputs(encoder, texts, packs, tokens)[i]):
            assert mine.keys() == travelled_inputs.keys() and all(torch.equal(mine[k], travelled_inputs[k]) for k in mine)


def test_token_ids_keep_each_text_by_position_in_the_smallest_type():
    from lgip_metric.scoring.texts import TokenIds, _flat_ids

    ids = [[49406, 320, 49407], [5], [], [49406, 49407]]
    assert _flat_ids(ids).dtype == np.uint16 and _flat_ids([[70000, 1]]).dtype == np.int32
    positions = np.array([6, 2, 0, 4])  # the order the plan counted them in
    halves = [(_flat_ids(ids[:2]), np.array([3, 1])), (_flat_ids(ids[2:]), np.array([0, 2]))]
    tokens = TokenIds(8, positions, halves)
    assert [tokens.ids(p) for p in positions] == ids
    with pytest.raises(KeyError, match="text 1 was not tokenised"):
        tokens.ids(1)


@pytest.mark.parametrize("tree_packing", [False, True])
def test_the_engine_tokenises_each_text_once(dataset, tree_packing, tmp_path, monkeypatch):
    """The plan's counting pass keeps the ids its batches are made from: no text is tokenised twice
    (workers fork from this process, so the count is read in a file they append to)."""
    from lgip_metric.models.openclip_backend import OpenClipEncoder

    log, tokenize = tmp_path / "tokenised.txt", OpenClipEncoder.tokenize

    def counting(self, texts):
        with open(log, "a") as handle:
            handle.write("".join(f"{t!r}\n" for t in texts))
        return tokenize(self, texts)

    monkeypatch.setattr(OpenClipEncoder, "tokenize", counting)
    run = score_dataset("random:tiny-clip", dataset, tmp_path / "out", cache_dir="none", batch_size=4,
                        num_workers=2, progress=False, tree_packing=tree_packing)
    seen = log.read_text().splitlines()
    n = run.provenance.counts["unique_texts"]
    assert len(set(seen)) == n + 1  # every text, and the one-word text that sizes the embeddings
    assert len(seen) <= n + 1 + texts_module.count_chunks(n)  # a chunk re-reads the text before it (shared prefix)


def test_the_join_thread_runs_calls_in_order_and_raises_their_errors():
    from lgip_metric.scoring.join import Behind

    seen = []
    with Behind(depth=2) as behind:
        for i in range(50):
            behind.submit(seen.append, i)
            assert len(behind.pending) <= 2
    assert seen == list(range(50))
    with pytest.raises(ZeroDivisionError), Behind() as behind:
        behind.submit(lambda: 1 / 0)
        behind.settle()


def test_the_join_runs_in_the_callers_thread_when_inline():
    import threading

    from lgip_metric.scoring.join import Behind

    threads = []
    with Behind(inline=True) as behind:
        for i in range(5):
            behind.submit(lambda i=i: threads.append((i, threading.get_ident())))
            assert threads[-1][0] == i and not behind.pending  # done at once, nothing waiting
    assert {ident for _, ident in threads} == {threading.get_ident()}
    with pytest.raises(ZeroDivisionError), Behind(inline=True) as behind:
        behind.submit(lambda: 1 / 0)


@pytest.mark.parametrize("cpus,threads,device,expected", [
    (2, 2, "cpu", 0),  # this project's machine: torch's two threads use both cores, a worker would take their time
    (16, 8, "cpu", 8),  # hyperthreads torch leaves free
    (4, 8, "cpu", 0),
    (2, 2, "cuda", 1),  # a GPU model: every CPU but one decodes and tokenises beside it
    (16, 16, "cuda", 15),  # an H100/H200 machine of 16 CPUs: decoding and tokenising bound its GPU run
    (64, 32, "cuda", 16),  # at most MAX_WORKERS
])
def test_default_workers_leave_a_cpu_models_cores_to_its_forward_passes(monkeypatch, cpus, threads, device, expected):
    from lgip_metric.models import factory

    monkeypatch.setattr(factory.os, "cpu_count", lambda: cpus)
    monkeypatch.setattr(factory.torch, "get_num_threads", lambda: threads)
    assert factory.loader_workers(None, torch.device(device)) == expected
    assert factory.loader_workers(3, torch.device(device)) == 3 and factory.loader_workers(-1, torch.device(device)) == 0
