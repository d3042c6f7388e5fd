"""The audit as markdown: its table (blocks, then types) and the top word imbalances per type."""
from __future__ import annotations

from lgip_dataset.measurable import NOT_MEASURABLE, RULE
from lgip_metric.audit.text_only import NGRAM_SCORERS
from lgip_metric.stats import interval_label


def _cell(block: dict | None, key: str = "accuracy") -> str:
    from lgip_metric.report.tables import number

    if block and block.get(NOT_MEASURABLE):
        return f"not measurable ({block[NOT_MEASURABLE]})"
    return number(block[key], block.get("interval"), digits=3) if block and block.get(key) is not None else "—"


def _untrained_cell(block: dict | None) -> str:
    return f"{_cell(block, 'PR')} ({block['pairs']} pairs)" if block else "—"


def markdown(result: dict, untrained: dict | None = None) -> str:
    """The audit's table (blocks, then types) and the top word imbalances per type."""
    from lgip_metric.report.tables import markdown as table

    learners = result["settings"]["learners"]
    ci = interval_label(result["settings"]["confidence"])
    models = list((untrained or {}).get("models", {}))
    header = ["type", "pairs", "images", *(f"{name} learner acc [{ci}]" for name in learners)]
    header += [f"{key} PR" for key in NGRAM_SCORERS] if result["settings"]["ngram"] else []
    header += [f"untrained {m} PR [{ci}]" for m in models]
    lines = []
    for label, entry in [*((f"**{n}**", b) for n, b in result["blocks"].items()), *result["per_type"].items()]:
        name = label.strip("*")
        cells = [label, entry["pairs"], entry["images"], *(_cell(entry["learners"].get(k)) for k in learners)]
        if result["settings"]["ngram"]:
            cells += [_cell(entry.get(key), "PR") for key in NGRAM_SCORERS]
        cells += [_untrained_cell(untrained["models"][m]["PR"].get(name)) for m in models]
        lines.append(cells)
    text = table(header, lines)
    text += ("\nLearner accuracy: held-out share of pairs where a text-only logistic regression picks the human "
             f"caption (a tie counts 1/2), one learner per type, cross-fitted over {result['settings']['folds']} "
             "image folds; 0.5 is chance. PR: caption-nested share where the cross-fitted n-gram LM scores the "
             "caption above the negative (a tie is not positive). Blocks pool their types' pairs. Not measurable: "
             f"{RULE}.\n")
    if untrained:
        text += (f"Untrained models: seeded random weights, scored on the {untrained['pairs']} pairs of the "
                 f"{untrained['images_found']} images found in {untrained['images_dir']}; a model that cannot see "
                 "sits at PR 0.5 where the texts carry no systematic difference.\n")
    text += "".join(f"\nwarning: {line}\n" for line in result.get("warnings", []))
    text += f"\n### Words the negatives remove or add most unevenly (>= {result['settings']['min_uses']} uses)\n\n"
    rows = [[t, w["word"], w["original"], w["replacement"], f"{w['imbalance']:+.2f}"]
            for t, words in result["artifacts"].items() for w in words]
    return text + (table(["type", "word", "in original", "in replacement", "imbalance"], rows) if rows
                   else "No word is used that often.\n")
