"""The registered variant families; importing this package registers them all.

To add a family, add a module here that decorates its generate function with
``lgip_dataset.perturb.registry.register`` and import it below. Registration order is the order
of ``--families all`` and of the extra families' selection; the core families come first.
"""
from lgip_dataset.perturb.families import paraphrase  # noqa: F401  (template, marker)
from lgip_dataset.perturb.families import objects  # noqa: F401,I001
from lgip_dataset.perturb.families import colors  # noqa: F401
from lgip_dataset.perturb.families import counts  # noqa: F401
from lgip_dataset.perturb.families import syntactic  # noqa: F401  (extended probes, section 4)
from lgip_dataset.perturb.families import negation  # noqa: F401
from lgip_dataset.perturb.families import binding  # noqa: F401
from lgip_dataset.perturb.families import relation  # noqa: F401
from lgip_dataset.perturb.families import opposites  # noqa: F401  (spatial, temporal)
from lgip_dataset.perturb.families import scramble  # noqa: F401  (scramble_content, _function, _all)
from lgip_dataset.perturb.families import hard  # noqa: F401  (hard_object, hard_color, hard_count)
from lgip_dataset.perturb.families import hard_relation  # noqa: F401  (hard_relation)
