"""Statistics computed from a score table beyond the metric's own: the table read into the metric's
inputs (``score_table``), the blind text-only baselines (``blind``, ``trigram``), the 2x2 group scores
(``groups``), the per-example analysis (``analysis``) and the paper's quoted figures (``reference``).

The metric's own statistics (E_inv, E_sens, PR and their intervals) are ``lgip_metric.stats`` and its
``stats_*`` files, beside the ``evaluate`` module, because ``evaluate.load`` copies only the files in the
module's own folder. May import those, the model registry (``lgip_metric.models``), the results record
and ``lgip_dataset``; never the scoring engine beside it, the report or anything above
(``docs/architecture.md``).
"""
