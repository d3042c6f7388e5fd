"""What a run puts out: the ``results.json`` record (:mod:`~lgip_metric.results.record`), the provenance
of a score (:mod:`~lgip_metric.results.provenance`), model-card entries
(:mod:`~lgip_metric.results.model_index`) and the lock on the run folder while it is written
(:mod:`~lgip_metric.results.run_folder`).

May import the metric's statistics (``lgip_metric.stats``, ``about``) and ``lgip_dataset``; the scoring
engine imports its provenance record from here, so nothing here imports scoring, statistics, report or
anything above them (``docs/architecture.md``). The names of the record are importable from here, as
they were from the module ``lgip_metric.results`` before 0.2.0.
"""
from lgip_metric.results.record import (HIGHER_IS_BETTER, READABLE_VERSIONS, RESULTS_FILE, VOLATILE, Results,
                                        build_results, check_comparable, flat_metrics, git_hash, higher_is_better,
                                        load_comparable, load_results, with_scores, without_volatile, write_results)

__all__ = ["HIGHER_IS_BETTER", "READABLE_VERSIONS", "RESULTS_FILE", "VOLATILE", "Results", "build_results",
           "check_comparable", "flat_metrics", "git_hash", "higher_is_better", "load_comparable", "load_results",
           "with_scores", "without_volatile", "write_results"]
