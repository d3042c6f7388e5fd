"""The scoring engine: every row of a dataset's ``pairs`` config scored by one model, each unique image
and text encoded once (:mod:`~lgip_metric.scoring.engine`), with what it needs: the rows and images it
reads (``score_inputs``, ``image_data``), tokenising in workers (``texts``), the join of embeddings into
scores (``join``), the embedding cache (``cache``), ``torchrun`` (``distributed``) and the heap setting
of its process (``heap``).

May import the models (``lgip_metric.models``), the provenance record (``lgip_metric.results``), the
metric's statistics and ``lgip_dataset``; never the blind baselines and analyses beside it
(``lgip_metric.statistics``), the report or anything above (``docs/architecture.md``).
"""
