"""The audit as markdown: its held-out and in-sample tables (blocks, then types) and the top word imbalances."""
from __future__ import annotations

from lgip_dataset.selection.measurable import NOT_MEASURABLE, RULE
from lgip_metric.audit.text_only import NGRAM_SCORERS
from lgip_metric.stats import interval_label


def _cell(block: dict | None, key: str = "accuracy") -> str:
    from lgip_metric.report.tables import number

    if block and block.get(NOT_MEASURABLE):
        return f"not measurable ({block[NOT_MEASURABLE]})"
    return number(block[key], block.get("interval"), digits=3) if block and block.get(key) is not None else "—"


def _untrained_cell(block: dict | None) -> str:
    return f"{_cell(block, 'PR')} ({block['pairs']} pairs)" if block else "—"


def _held_out_cell(block: dict | None) -> str:
    """A held-out learner's mean accuracy with the range over the partitions drawn."""
    if block and block.get(NOT_MEASURABLE):
        return f"not measurable ({block[NOT_MEASURABLE]})"
    if not block or block.get("accuracy") is None:
        return "—"
    low, high = block["range"]
    return f"{block['accuracy']:.3f} ({low:.3f}–{high:.3f})"


def markdown(result: dict, untrained: dict | None = None) -> str:
    """The audit's tables (held out first, then in-sample; blocks, then types) and the top word imbalances."""
    from lgip_metric.report.tables import markdown as table

    settings = result["settings"]
    learners = settings["learners"]
    ci = interval_label(settings["confidence"])
    models = list((untrained or {}).get("models", {}))
    held = [key for key in ("trigram", "corpus_trigram") if settings["ngram"] and (key != "corpus_trigram" or "corpus" in settings)]
    header = ["type", "pairs", "images", *(f"{name} learner acc, mean (range)" for name in learners)]
    typical = ["typicality", *(["corpus_typicality"] if "corpus" in settings else [])]
    header += ["context typicality, other folds, mean (range)", *([f"context typicality, corpus [{ci}]"]
                                                                  if "corpus" in settings else [])]
    header += [f"{NGRAM_SCORERS[key].split(' (')[0]} PR [{ci}]" for key in held]
    header += [f"untrained {m} PR [{ci}]" for m in models]
    entries = [*((f"**{n}**", b) for n, b in result["blocks"].items()), *result["per_type"].items()]
    lines = []
    for label, entry in entries:
        name = label.strip("*")
        cells = [label, entry["pairs"], entry["images"], *(_held_out_cell(entry["learners"].get(k)) for k in learners)]
        cells += [_held_out_cell(entry.get(key)) if key == "typicality" else _cell(entry.get(key)) for key in typical]
        cells += [_cell(entry.get(key), "PR") for key in held]
        cells += [_untrained_cell(untrained["models"][m]["PR"].get(name)) for m in models]
        lines.append(cells)
    text = "### Held out: instruments no build uses\n\n" + table(header, lines)
    text += (f"\nLearner accuracy: the share of pairs where a text-only learner picks the human caption (a tie counts "
             f"1/2), one learner per type, cross-fitted over {settings['repeats']} random partitions of the images into "
             f"{settings['folds']} folds drawn at audit time (seed {settings['seed']}; a build draws its own from "
             "another stream): the mean and, in brackets, the range over the partitions. word/char: logistic "
             "regressions on word 1-2-grams / character 2-4-grams; nb: naive Bayes on word 1-2-grams; context: "
             "logistic regression on each changed word paired with each word both texts share. Context typicality: "
             "the share of pairs whose caption-only words co-occur more typically (smoothed PMI across whole "
             "captions) with the shared words than the negative-only words do, learnt from the captions of the "
             "other folds' images (mean and range over the partitions)" + (" and from the corpus below" if "corpus"
                                                                          in settings else "") + ". PR: "
             "caption-nested share where the LM scores the caption above the negative (a tie is not positive)"
             + (f"; the corpus LM learnt {settings['corpus']['captions']:,} captions of "
                f"{settings['corpus']['images']:,} other images in {settings['corpus']['file']}, each row scored by those of "
                "its own image's statistics fold (the half no build counts for it)" if "corpus" in settings
                else "") + ". 0.5 is chance, and a figure below it is an artifact too. Blocks pool their types' pairs. "
                f"Not measurable: {RULE}.\n")
    if untrained:
        text += (f"Untrained models: seeded random weights, scored on the {untrained['pairs']} pairs of the "
                 f"{untrained['images_found']} images found in {untrained['images_dir']}; a model that cannot see "
                 "sits at PR 0.5 where the texts carry no systematic difference.\n")
    in_sample = result.get("in_sample") or {}
    if settings["ngram"] or in_sample:
        rows = [[label, _cell(in_sample.get(label.strip("*"))), _cell(entry.get("bigram"), "PR")]
                for label, entry in entries]
        text += ("\n### In-sample: the build's own instruments\n\n"
                 + table(["type", f"build's word learner acc [{ci}]", f"bigram PR (the build's folds) [{ci}]"], rows)
                 + "\nThe build chose its hard flips against these (its word learners on its own partitions, recorded "
                   "in lgip_build.json; its bigram LM on two image folds), so a figure near 0.5 here says little "
                   "about the texts; the held-out figures above say how far text alone goes.\n")
    text += "".join(f"\nwarning: {line}\n" for line in result.get("warnings", []))
    text += f"\n### Words the negatives remove or add most unevenly (>= {settings['min_uses']} uses)\n\n"
    rows = [[t, w["word"], w["original"], w["replacement"], f"{w['imbalance']:+.2f}"]
            for t, words in result["artifacts"].items() for w in words]
    return text + (table(["type", "word", "in original", "in replacement", "imbalance"], rows) if rows
                   else "No word is used that often.\n")


def scaling_markdown(entries: list[dict] | None) -> str:
    """The scaling table: the held-out learners' mean accuracy per block and type by the captions audited."""
    from lgip_metric.report.tables import markdown as table, number

    if not entries:
        return ""
    names = list(entries[-1]["figures"])
    learners = list(entries[-1]["figures"][names[0]]) if names else []
    header = ["captions", "images", "pairs", *(f"{n}: {k}" for n in names for k in learners)]
    lines = [[f"{e['captions']:,}", f"{e['images']:,}", f"{e['pairs']:,}",
              *(f"not measurable ({e['not_measurable'][n]})" if n in e.get("not_measurable", {})
                else number(e["figures"][n][k], digits=3) for n in names for k in learners)] for e in entries]
    return ("\n### Held out, by size: does text alone gain with more captions?\n\n" + table(header, lines)
            + "\nNested random subsets of the images (seeded), each audited as above (mean over the partitions); "
              "the last row is the whole set. A figure that rises with the captions is a regularity a larger "
              "training set would teach a text-only model.\n")
