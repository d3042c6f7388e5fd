"""Models a user already holds: ``score`` / ``evaluate_model`` take a loaded open_clip model with its preprocess and
tokenizer, or a transformers model with its processor, and give what the same model gives by name or folder, with
provenance saying what is known of the object; ``pair_images`` gives each pair's image."""
from __future__ import annotations

import open_clip
import pytest
from transformers import CLIPModel, CLIPProcessor

from lgip_dataset import SAMPLE_DIR
from lgip_dataset.files.hub_io import config_files
from lgip_dataset.files.image_cells import ImageCells
from lgip_dataset.files.image_map import pair_images
from lgip_dataset.files.images import decode_image
from lgip_metric import evaluate_model, score
from lgip_metric.models import ModelError
from lgip_metric.testing import make_tiny_hf_clip, make_tiny_openclip

OPTIONS = dict(limit=200, bootstrap=50, num_workers=0, device="cpu", progress=False, cache_dir="none")
SCORES = ["row_id", "s_original", "s_variant"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("held")
    return {"open_clip": make_tiny_openclip(root / "open_clip"), "transformers": make_tiny_hf_clip(root / "hf_clip")}


def held_and_named(held, named, tmp_path, **objects):
    by_object = evaluate_model(held, tmp_path / "held", **objects, **OPTIONS)
    by_name = evaluate_model(named, tmp_path / "named", **OPTIONS)
    assert by_object.frame[SCORES].equals(by_name.frame[SCORES])
    assert by_object.statistics == by_name.statistics
    assert by_object.data["blind"] == by_name.data["blind"]
    return by_object.provenance, by_name.provenance


def test_a_held_open_clip_model_equals_the_same_model_by_name(folders, tmp_path):
    model, _, preprocess = open_clip.create_model_and_transforms(folders["open_clip"])
    tokenizer = open_clip.get_tokenizer(folders["open_clip"])
    held, named = held_and_named(model, folders["open_clip"], tmp_path, preprocess=preprocess, tokenizer=tokenizer)
    assert held.weights_sha256 == named.weights_sha256 and held.model_id == "open_clip:user-supplied:CLIP"
    assert held.held["source"] == "user-supplied object" and held.held["class"] == "open_clip.model.CLIP"
    assert held.held["preprocess_cfg"]["size"] == [32, 32] and held.held["parameters"] > 0
    assert any("pretrained tag" in unknown for unknown in held.held["unknown"])
    assert held.image["transform"] == "user-supplied" and "Normalize" in held.image["source"]
    assert named.held is None and not held.random_weights


def test_a_held_transformers_model_equals_the_same_folder(folders, tmp_path):
    model = CLIPModel.from_pretrained(folders["transformers"])
    processor = CLIPProcessor.from_pretrained(folders["transformers"], backend="pil")  # the engine's image backend
    held, named = held_and_named(model, folders["transformers"], tmp_path, processor=processor)
    assert held.weights_sha256 == named.weights_sha256 and held.model_id == "transformers:user-supplied:CLIPModel"
    assert held.held["class"] == "transformers.models.clip.modeling_clip.CLIPModel"
    assert held.held["model_type"] == "clip" and held.held["name_or_path"] == folders["transformers"]
    assert len(held.held["config_sha256"]) == 64 and held.model_type == named.model_type == "clip"
    assert (tmp_path / "held" / "provenance.json").read_text().count('"held"') == 1


def test_score_takes_a_held_model_too(folders, tmp_path):
    model, _, preprocess = open_clip.create_model_and_transforms(folders["open_clip"])
    run = score(model, tmp_path / "run", preprocess=preprocess, tokenizer=open_clip.get_tokenizer(folders["open_clip"]),
                limit=50, num_workers=0, device="cpu", progress=False, cache_dir="none")
    assert len(run.frame) == 50 and run.provenance.held["source"] == "user-supplied object"
    assert "a user-supplied open_clip.model.CLIP object; unknown:" in run.provenance.summary(run.scores_path)


def test_what_does_not_go_with_a_model_is_refused_before_scoring(folders, tmp_path):
    hf = CLIPModel.from_pretrained(folders["transformers"])
    oc, _, preprocess = open_clip.create_model_and_transforms(folders["open_clip"])
    tokenizer = open_clip.get_tokenizer(folders["open_clip"])
    processor = CLIPProcessor.from_pretrained(folders["transformers"])
    cases = [
        (dict(model=hf), "needs what turns images and texts into its inputs: processor= for a transformers model"),
        (dict(model=oc, processor=processor), "processor= goes with a transformers model .* model is a CLIP"),
        (dict(model=hf, preprocess=preprocess, tokenizer=tokenizer), "go with an open_clip model .* model is a CLIPModel"),
        (dict(model=hf, processor=processor, tokenizer=tokenizer), "not both"),
        (dict(model=hf, processor=processor.tokenizer), "must hold a tokenizer and an image processor"),
        (dict(model=folders["open_clip"], tokenizer=tokenizer), "go with a model object; the model .* is a name"),
        (dict(model=hf, processor=processor, pretrained="openai"), "applies to a model name, not to CLIPModel object"),
    ]
    for arguments, message in cases:
        with pytest.raises(ModelError, match=message):
            score(out=tmp_path / "refused", **arguments)
        assert not (tmp_path / "refused").exists()


def test_pair_images_gives_each_pair_the_image_the_engine_decodes():
    images = pair_images(SAMPLE_DIR)
    cells = ImageCells(config_files(SAMPLE_DIR, "images"))
    ids = cells.image_ids().tolist()
    assert len(images) == len(ids) and list(images) == ids
    for row in (0, len(ids) - 1):
        expected = decode_image(cells.cell(row)["bytes"])
        assert images[ids[row]].tobytes() == expected.tobytes() and images[ids[row]].mode == "RGB"
        assert ids[row] in images and str(ids[row]) in images  # an id as text finds the same image
    assert -1 not in images and "not an id" not in images
    with pytest.raises(KeyError, match="image_id -1 is not in the images config"):
        images[-1]
