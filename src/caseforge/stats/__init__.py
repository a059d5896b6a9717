"""Statistics for eval results: intervals, clustered errors, pass@k and pass^k, paired
comparison (McNemar, paired differences, bootstrap over cases), and power."""

from caseforge.stats.intervals import (
    clustered_se,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
    z_value,
)
from caseforge.stats.paired import (
    ItemCounts,
    PairedDifference,
    bootstrap_items,
    bootstrap_paired_ratio,
    mcnemar_chi2,
    mcnemar_exact,
    paired_difference,
)
from caseforge.stats.power import (
    half_width,
    mcnemar_exact_power,
    mde_paired,
    mde_unpaired,
    sample_size_mcnemar_exact,
    sample_size_paired,
    sample_size_unpaired,
)

__all__ = [
    "ItemCounts",
    "PairedDifference",
    "bootstrap_items",
    "bootstrap_paired_ratio",
    "clustered_se",
    "half_width",
    "mcnemar_chi2",
    "mcnemar_exact",
    "mcnemar_exact_power",
    "mde_paired",
    "mde_unpaired",
    "paired_difference",
    "pass_at_k",
    "pass_hat_k",
    "sample_size_mcnemar_exact",
    "sample_size_paired",
    "sample_size_unpaired",
    "wilson_interval",
    "z_value",
]
