"""Statistics for eval results: intervals, clustered errors, pass@k and pass^k."""

from caseforge.stats.intervals import (
    clustered_se,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
    z_value,
)

__all__ = ["clustered_se", "pass_at_k", "pass_hat_k", "wilson_interval", "z_value"]
