"""Statistics for eval results: intervals, clustered errors, pass@k and pass^k, paired
comparison (McNemar, paired differences, bootstrap over cases), and power.

Names are imported on first use, so counting items (``counts``) or an interval does not
load NumPy. (This package sits below ``caseforge.imports``, so it has its own small
``__getattr__``.)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names ``__getattr__`` imports, for type checkers
    from caseforge.stats.counts import ItemCounts as ItemCounts
    from caseforge.stats.intervals import clustered_se as clustered_se
    from caseforge.stats.intervals import pass_at_k as pass_at_k
    from caseforge.stats.intervals import pass_hat_k as pass_hat_k
    from caseforge.stats.intervals import wilson_interval as wilson_interval
    from caseforge.stats.intervals import z_value as z_value
    from caseforge.stats.paired import PairedDifference as PairedDifference
    from caseforge.stats.paired import bootstrap_items as bootstrap_items
    from caseforge.stats.paired import bootstrap_paired_ratio as bootstrap_paired_ratio
    from caseforge.stats.paired import mcnemar_chi2 as mcnemar_chi2
    from caseforge.stats.paired import mcnemar_exact as mcnemar_exact
    from caseforge.stats.paired import paired_difference as paired_difference
    from caseforge.stats.power import half_width as half_width
    from caseforge.stats.power import mcnemar_exact_power as mcnemar_exact_power
    from caseforge.stats.power import mde_paired as mde_paired
    from caseforge.stats.power import mde_unpaired as mde_unpaired
    from caseforge.stats.power import sample_size_mcnemar_exact as sample_size_mcnemar_exact
    from caseforge.stats.power import sample_size_paired as sample_size_paired
    from caseforge.stats.power import sample_size_unpaired as sample_size_unpaired

_WHERE = {
    "clustered_se": "caseforge.stats.intervals",
    "pass_at_k": "caseforge.stats.intervals",
    "pass_hat_k": "caseforge.stats.intervals",
    "wilson_interval": "caseforge.stats.intervals",
    "z_value": "caseforge.stats.intervals",
    "ItemCounts": "caseforge.stats.counts",
    "PairedDifference": "caseforge.stats.paired",
    "bootstrap_items": "caseforge.stats.paired",
    "bootstrap_paired_ratio": "caseforge.stats.paired",
    "mcnemar_chi2": "caseforge.stats.paired",
    "mcnemar_exact": "caseforge.stats.paired",
    "paired_difference": "caseforge.stats.paired",
    "half_width": "caseforge.stats.power",
    "mcnemar_exact_power": "caseforge.stats.power",
    "mde_paired": "caseforge.stats.power",
    "mde_unpaired": "caseforge.stats.power",
    "sample_size_mcnemar_exact": "caseforge.stats.power",
    "sample_size_paired": "caseforge.stats.power",
    "sample_size_unpaired": "caseforge.stats.power",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'caseforge.stats' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
