"""The files of an LGIP folder: reading a built folder and writing files safely.

:mod:`.hub_io` loads a config of a built folder or Hub repo and carries its shards, fingerprint and build record
(``DatasetFiles``); :mod:`.image_cells` reads the ``images`` config's JPEG bytes a few rows at a time;
:mod:`.image_map` maps each ``image_id`` to its picture; :mod:`.images` decodes and checks image bytes, the one place
they are opened; :mod:`.atomic` writes a file atomically and checks an output and its disk; :mod:`.locks` holds an
OS lock on a folder.

It may import the top-level modules of :mod:`lgip_dataset` (``errors``, ``schema``) and nothing else of the package.
"""
