"""The registered variant families; importing this package registers them all.

To add a family, add a module here that decorates its generate function with
``lgip_dataset.perturb.registry.register`` and import it below. Registration order is the order
of ``Perturber.families``; it has no effect on the output.
"""
from lgip_dataset.perturb.families import paraphrase  # noqa: F401  (template, marker)
from lgip_dataset.perturb.families import objects  # noqa: F401,I001
from lgip_dataset.perturb.families import colors  # noqa: F401
from lgip_dataset.perturb.families import counts  # noqa: F401
