"""The model synthesis uses: the suite's ``synth:`` settings on the generic model client.

``synth write`` also records and replays its model's answers: ``SUITE/synth/recordings/``
holds each request and its wire-format response, so a suite can ship the answers behind
its review queue and anyone can re-create the queue offline (as ``calibrate`` does with
the judge's answers)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import httpx

from caseforge.agent.fixtures import FixtureMode, FixtureStore, FixtureTransport
from caseforge.case.load import load_config
from caseforge.errors import CaseforgeError, EnvError
from caseforge.llm.client import ModelClient
from caseforge.llm.prices import PriceTable
from caseforge.paths import suite_paths

RECORDINGS = "recordings"
RECORDING = "write"  # one file, recordings/write.json: every tuple's prompt is its own key
REPLAY_BASE_URL = "http://synth-recordings.invalid/v1"


def synth_client(
    suite_dir: Path,
    command: str,
    *,
    cache: bool = True,
    http_client: httpx.AsyncClient | None = None,
) -> ModelClient:
    """The model for synthesis (``synth:`` in caseforge.yaml), with the suite's cache (unless
    ``cache=False``) and prices; a one-line error naming what to set when there is none."""
    config = load_config(suite_dir)
    client = ModelClient.from_settings(
        config.synth,
        cache_dir=suite_paths(suite_dir).cache if cache else None,
        prices=config.prices,
        http_client=http_client,
    )
    if client is None:
        if config.synth is not None or os.environ.get("CASEFORGE_MODEL"):
            what = "set OPENAI_API_KEY (or OPENAI_BASE_URL for a self-hosted endpoint)"
        else:
            what = "set synth.model in caseforge.yaml and OPENAI_API_KEY (or OPENAI_BASE_URL)"
        raise EnvError(f"{command} needs a model: {what}")
    return client


def recordings_dir(suite_dir: Path) -> Path:
    return suite_dir / "synth" / RECORDINGS


@dataclass
class SynthSession:
    """The client ``synth write`` uses, and how it reaches the model."""

    mode: str  # replay | record | live
    client: ModelClient
    store: FixtureStore | None = None

    def finish(self) -> None:
        """Write what was recorded."""
        if self.store is not None:
            self.store.flush()


def synth_session(
    suite_dir: Path, command: str, *, record: bool = False, live: bool = False
) -> SynthSession:
    """Replay the suite's recordings when it has them (offline, no key needed), unless
    ``live`` asks the endpoint; ``record`` asks the endpoint and keeps its answers."""
    folder = recordings_dir(suite_dir)
    has_recordings = folder.is_dir() and any(folder.glob("*.json"))
    if record:
        store = FixtureStore(suite_dir, FixtureMode.RECORD, folder)
        http = httpx.AsyncClient(transport=FixtureTransport(store.session(RECORDING)))
        # Recording means asking the endpoint, so never the cache.
        client = synth_client(suite_dir, command, cache=False, http_client=http)
        return SynthSession("record", client, store)
    if live or not has_recordings:
        return SynthSession("live", synth_client(suite_dir, command))
    config = load_config(suite_dir)
    model = os.environ.get("CASEFORGE_MODEL") or (config.synth.model if config.synth else None)
    if not model:
        raise CaseforgeError(
            f"{suite_dir / 'caseforge.yaml'}: no synth.model, so {folder} cannot be replayed"
        )
    store = FixtureStore(
        suite_dir,
        FixtureMode.REPLAY,
        folder,
        record_hint="run `caseforge synth write --record` to record them, or --live",
    )
    http = httpx.AsyncClient(transport=FixtureTransport(store.session(RECORDING)))
    replay = ModelClient(
        model=model,
        base_url=REPLAY_BASE_URL,
        http_client=http,
        max_attempts=1,
        prices=PriceTable(config.prices),
    )
    return SynthSession("replay", replay, store)
