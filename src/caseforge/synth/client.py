"""The model synthesis uses: the suite's ``synth:`` settings on the generic model client."""

from __future__ import annotations

import os
from pathlib import Path

from caseforge.case.load import load_config
from caseforge.errors import CaseforgeError
from caseforge.llm.client import ModelClient
from caseforge.paths import suite_paths


def synth_client(suite_dir: Path, command: str, *, cache: bool = True) -> ModelClient:
    """The model for synthesis (``synth:`` in caseforge.yaml), with the suite's cache (unless
    ``cache=False``) and prices; a one-line error naming what to set when there is none."""
    config = load_config(suite_dir)
    client = ModelClient.from_settings(
        config.synth,
        cache_dir=suite_paths(suite_dir).cache if cache else None,
        prices=config.prices,
    )
    if client is None:
        if config.synth is not None or os.environ.get("CASEFORGE_MODEL"):
            what = "set OPENAI_API_KEY (or OPENAI_BASE_URL for a self-hosted endpoint)"
        else:
            what = "set synth.model in caseforge.yaml and OPENAI_API_KEY (or OPENAI_BASE_URL)"
        raise CaseforgeError(f"{command} needs a model: {what}")
    return client
