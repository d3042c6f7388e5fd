"""The report's "validated vs all" section: per flip type, the rows and the model's PR on all scored rows and on
those the validated rule keeps (results of ``lgip evaluate --validated``), side by side."""
from __future__ import annotations

from lgip_metric.report.tables import markdown, number
from lgip_metric.results.record import Results


def validated_records(results: list[Results]) -> list[dict]:
    """One record per (model, flip type) of the results that hold ``validated_vs_all``."""
    return [{"model": r.label, "type": type_, **figures}
            for r in results if r.data.get("validated_vs_all")
            for type_, figures in r.data["validated_vs_all"]["per_type"].items()]


def validated_markdown(results: list[Results]) -> str:
    """The section's Markdown ("" when no results hold the comparison)."""
    records = validated_records(results)
    if not records:
        return ""
    rule = next(r.data["validated_vs_all"]["rule"] for r in results if r.data.get("validated_vs_all"))
    rows = [[r["model"], r["type"], r["metric"], r["rows_all"], r["rows_validated"], number(r["all"]),
             number(r["validated"]) if r["validated"] is not None else "—"] for r in records]
    return ("## Validated vs all rows\n\n"
            + markdown(["Model", "flip type", "metric", "rows (all)", "rows (validated)", "all rows ↑", "validated ↑"],
                       rows)
            + f"\nThe statistics of this report are those of the validated rows: {rule}. The rows the rule drops were "
            "scored in the same run; \"all rows\" includes them.\n")
