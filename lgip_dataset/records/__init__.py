"""The shipped records of measured figures and the readers that quote them.

:mod:`.held_out_reference` reads the reference builds' held-out figures (``reference/held_out_audit.json``) for a
build's card; :mod:`.figures` gives every figure the docs and cards repeat, each read from its record (the embedded
sample's build record, the held-out reference, the sample's audit), and writes them into marked pages.

It may import the top-level modules of :mod:`lgip_dataset` (``SAMPLE_DIR``, ``errors``) and nothing else of the
package.
"""
