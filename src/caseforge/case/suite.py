"""The suite configuration, ``SUITE/caseforge.yaml`` (docs/reference/config.md)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from caseforge.errors import did_you_mean
from caseforge.jsontypes import JSONObject


class AgentSpec(BaseModel):
    """How to reach the agent: exactly one of a Python callable, a command, or an HTTP URL."""

    model_config = ConfigDict(extra="forbid")

    callable: str | None = Field(default=None, description="`module:function`, sync or async.")
    command: list[str] | str | None = Field(
        default=None, description="A process reading one JSON request on stdin."
    )
    http: str | None = Field(default=None, description="A URL that accepts the JSON by POST.")

    @model_validator(mode="after")
    def _exactly_one(self) -> AgentSpec:
        given = [k for k in ("callable", "command", "http") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of `callable`, `command`, `http`")
        return self

    @field_validator("callable")
    @classmethod
    def _module_colon_name(cls, value: str | None) -> str | None:
        if value is not None:
            module, sep, name = value.partition(":")
            if not (sep and module.strip() and name.strip()):
                raise ValueError(f"{value!r} is not `module:function` (e.g. my_agent:run)")
        return value

    @field_validator("command")
    @classmethod
    def _not_empty(cls, value: list[str] | str | None) -> list[str] | str | None:
        if value is not None and not (value if isinstance(value, list) else value.strip()):
            raise ValueError("the command is empty")
        return value

    @field_validator("http")
    @classmethod
    def _a_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"{value!r} is not an http(s)://HOST/PATH URL")
        return value


class DedupConfig(BaseModel):
    """Near-duplicate detection over the case inputs."""

    model_config = ConfigDict(extra="forbid")

    fields: list[str] | None = Field(
        default=None, description="Input fields compared; default: every string in the input."
    )
    threshold: float = Field(default=0.8, ge=0.0, le=1.0, description="Jaccard similarity.")
    ngram: int = Field(default=3, ge=1, le=10, description="Character n-gram length.")
    exact_max_cases: int = Field(
        default=1000, ge=0, description="Above this many cases, MinHash LSH replaces all pairs."
    )


class SplitConfig(BaseModel):
    """How ``caseforge split`` divides the cases."""

    model_config = ConfigDict(extra="forbid")

    test_fraction: float = Field(
        default=0.3, gt=0.0, lt=1.0, description="The share of cases (by id hash) in test."
    )
    dev_only: list[str] = Field(
        default_factory=list,
        description="Categories accepted with no case in test (one family that cannot be "
        "split, say): `validate` does not warn that they lack one, and `caseforge split` "
        "keeps their cases without a group in dev.",
    )

    @field_validator("dev_only")
    @classmethod
    def _named_once(cls, value: list[str]) -> list[str]:
        blank = [c for c in value if not c.strip()]
        if blank:
            raise ValueError("a dev-only category is a category's name, not empty")
        twice = sorted({c for c in value if value.count(c) > 1})
        if twice:
            raise ValueError(f"named twice: {', '.join(twice)}")
        return value


class GateRule(BaseModel):
    """One gate rule: a metric bound, a no-significant-drop test, or a must-pass tag."""

    model_config = ConfigDict(extra="forbid")

    metric: str | None = Field(
        default=None,
        description="A summary metric (`pass_rate`, `cost_usd`, `pass_hat_k.3`, "
        "`items.FIELD.recall`…): `caseforge validate` names those the suite can produce.",
    )
    tag: str | None = Field(
        default=None, description="Every case carrying this tag passes every trial."
    )
    no_significant_drop: bool = Field(
        default=False,
        description="Fail on a drop from the baseline that the paired test calls "
        "significant at `alpha` (pass_rate and item precision/recall).",
    )
    max: float | None = Field(default=None, description="The metric's highest allowed value.")
    min: float | None = Field(default=None, description="The metric's lowest allowed value.")
    max_increase: float | None = Field(default=None, description="Relative to the baseline.")
    max_drop: float | None = Field(default=None, description="Absolute, vs the baseline.")
    alpha: float = Field(
        default=0.05, gt=0.0, lt=1.0, description="The paired test's significance level."
    )

    @model_validator(mode="after")
    def _one_target(self) -> GateRule:
        if (self.metric is None) == (self.tag is None):
            raise ValueError("a gate rule names either a `metric` or a `tag`")
        if self.metric is not None and not (
            self.no_significant_drop
            or any(v is not None for v in (self.max, self.min, self.max_increase, self.max_drop))
        ):
            raise ValueError(
                "a metric rule needs `no_significant_drop`, `max`, `min`, "
                "`max_increase` or `max_drop`"
            )
        return self


class GateConfig(BaseModel):
    """What `caseforge gate` holds a run to, against a committed baseline."""

    model_config = ConfigDict(extra="forbid")

    rules: list[GateRule] = Field(
        default_factory=list, description="Every rule must hold for the gate to pass."
    )


# The metrics a gate rule may name: the run summary's numbers (a test holds this list to the
# report model), pass^k and pass@k by k, and the item counts and rates of each field whose
# checks feed item metrics.
SCALAR_METRICS = (
    "cases",
    "trials",
    "case_trials",
    "passed",
    "failed",
    "incomplete",
    "judge_checks_skipped",
    "errors",
    "pass_rate",
    "pass_rate_se",
    "fully_passing_cases",
    "false_positive_rate",
    "clean_case_trials",
    "cost_usd",
    "cost_per_run",
    "cost_per_true_finding",
    "input_tokens",
    "output_tokens",
    "latency_p50_s",
    "latency_p95_s",
)
BY_K_METRICS = ("pass_hat_k", "pass_at_k")
ITEM_STATS = ("tp", "fp", "fn", "precision", "recall")


def gate_metrics(trials: int, item_fields: Iterable[str]) -> list[str]:
    """Every metric name a suite with these trials and item fields can produce."""
    names = list(SCALAR_METRICS)
    names += [f"{m}.{k}" for m in BY_K_METRICS for k in range(1, trials + 1)]
    names += [f"items.{f}.{stat}" for f in sorted(set(item_fields)) for stat in ITEM_STATS]
    return names


def gate_rule_problems(
    rules: Sequence[GateRule], metrics: Sequence[str], tags: Iterable[str]
) -> list[tuple[int, str, str]]:
    """``(rule index, key, message)`` for each rule that names a metric the suite cannot
    produce, a paired test the metric has none of, or a tag no case carries: each would
    otherwise pass silently and switch that part of the gate off."""
    known_tags = set(tags)
    problems = []
    for index, rule in enumerate(rules):
        if rule.metric is not None:
            if rule.metric not in metrics:
                hint = did_you_mean(rule.metric, metrics)
                problems.append(
                    (
                        index,
                        "metric",
                        f"unknown metric {rule.metric!r}{hint}; "
                        f"this suite can gate on: {', '.join(_shown(metrics))}",
                    )
                )
            elif rule.no_significant_drop and not _paired(rule.metric):
                problems.append(
                    (
                        index,
                        "no_significant_drop",
                        f"{rule.metric!r} has no paired test: "
                        "use it with max, min, max_increase or max_drop "
                        "(no_significant_drop is for pass_rate and items.FIELD.precision|recall)",
                    )
                )
        if rule.tag is not None and rule.tag not in known_tags:
            hint = did_you_mean(rule.tag, known_tags)
            problems.append((index, "tag", f"no case is tagged {rule.tag!r}{hint}"))
    return problems


def _paired(metric: str) -> bool:
    parts = metric.split(".")
    return metric == "pass_rate" or (
        len(parts) == 3 and parts[0] == "items" and parts[2] in ("precision", "recall")
    )


def _shown(metrics: Sequence[str], limit: int = 12) -> list[str]:
    return list(metrics[:limit]) + (
        [f"… {len(metrics) - limit} more"] if len(metrics) > limit else []
    )


class ModelSettings(BaseModel):
    """A model used by caseforge itself (judge, synthesis). The endpoint comes from the
    environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``); the temperature is caseforge's
    (the judge 0, ``synth write`` 0.9, ``resynth`` 0.7)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(
        description="The model's name at the endpoint (OPENAI_BASE_URL, else OpenAI)."
    )
    timeout_s: float | None = Field(
        default=None, gt=0, description="Seconds one request may take (default 60)."
    )
    max_attempts: int | None = Field(
        default=None, ge=1, description="Attempts per request, retried on 429 and 5xx (default 4)."
    )
    rpm: int | None = Field(default=None, ge=1, description="Requests per minute, at most.")
    tpm: int | None = Field(
        default=None, ge=1, description="Tokens per minute, at most (estimated)."
    )
    structured: Literal["auto", "json_schema", "off"] | None = Field(
        default=None,
        description="Ask for a JSON schema response: auto (when the endpoint supports it), "
        "json_schema (always) or off (the schema in the prompt).",
    )


class SynthSettings(ModelSettings):
    """The model `synth write` and `resynth` use, and what `synth write` hands it."""

    facts: str | None = Field(
        default=None,
        description="module:function(input) -> str: the business facts `synth write` hands "
        "the model with each tuple.",
    )


class RateLimit(BaseModel):
    """A limit on the agent's model calls through ``ctx.llm()``, shared by the whole run:
    every concurrent case-trial and, with ``--executor ray``, every worker."""

    model_config = ConfigDict(extra="forbid")

    rpm: int | None = Field(default=None, ge=1, description="Requests per window.")
    tpm: int | None = Field(default=None, ge=1, description="Tokens per window (estimated).")
    window_s: float = Field(
        default=60.0, gt=0, description="The window rpm and tpm count over: a minute."
    )


class PrivacyConfig(BaseModel):
    """What re-synthesis may send to a model, and how variants are compared with originals."""

    model_config = ConfigDict(extra="forbid")

    send: Literal["structure", "substituted"] = Field(
        default="structure",
        description="`structure`: no original text leaves the machine (the default). "
        "`substituted`: the original text with its identifiers swapped, only to "
        "`allowed_endpoints`.",
    )
    allowed_endpoints: list[str] = Field(
        default_factory=list,
        description="Base URLs (scheme, host, port) that may receive substituted text.",
    )
    cjk_run: int = Field(
        default=7, ge=3, le=40, description="Shared Han characters in a row that fail a variant."
    )
    word_run: int = Field(
        default=6, ge=3, le=40, description="Shared words in a row that fail a variant."
    )
    flag_kinds: dict[str, str] = Field(
        default_factory=dict,
        description="What each flag kind means, in words the rewrite request may carry.",
    )

    @field_validator("allowed_endpoints")
    @classmethod
    def _base_urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            parts = urlsplit(url.strip())
            try:
                parts.port  # noqa: B018 - raises on a port out of range
            except ValueError as exc:
                raise ValueError(f"{url!r}: {exc}") from None
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"{url!r}: give a base URL such as http://10.0.0.5:8000/v1")
        return urls

    @model_validator(mode="after")
    def _endpoints_for_substituted(self) -> PrivacyConfig:
        if self.send == "substituted" and not self.allowed_endpoints:
            raise ValueError(
                "send: substituted needs allowed_endpoints (the self-hosted models that may "
                "receive substituted text)"
            )
        return self


class OtelConfig(BaseModel):
    """OpenTelemetry: caseforge's own exported spans, and the agent's spans it keeps."""

    model_config = ConfigDict(extra="forbid")

    capture_content: bool = Field(
        default=False,
        description="caseforge's own exported spans carry inputs, replies, prompts, "
        "completions and check reasons (never a case marked sensitive); off: names, counts, "
        "statuses and durations only.",
    )
    span_wait_s: float = Field(
        default=5.0,
        ge=0,
        le=300,
        description="Seconds to wait, after an HTTP agent answers, for its spans (when a check "
        "of the case reads them): such an agent exports after it answers.",
    )


class SuiteConfig(BaseModel):
    """``SUITE/caseforge.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, description="The suite's name: runs, baselines and reports carry it."
    )
    description: str = Field(default="", description="What the suite is for, for people.")
    agent: AgentSpec | None = None
    configs: dict[str, dict[str, object]] = Field(
        default_factory=dict, description="Named configurations handed to the agent."
    )
    trials: int = Field(
        default=1, ge=1, le=10_000, description="Trials per case (`--trials`; at most 10,000)."
    )  # run/plan.py's MAX_TRIALS
    concurrency: int = Field(
        default=8, ge=1, description="Case-trials in flight at once (`--concurrency`)."
    )
    timeout_s: float = Field(
        default=60.0, gt=0, description="Seconds a case-trial may take (`--timeout`)."
    )
    oracles: str | None = Field(default=None, description="Path to the oracles module.")
    oracle_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="`caseforge validate` kills an oracle call (or the module's import) that "
        "takes longer, and reports it for that case.",
    )
    checks: str | None = Field(
        default=None, description="Path to a module of the suite's own check modes."
    )
    workspace_setup: str | None = Field(
        default=None,
        description="`module:function(workspace, case)` preparing each trial's workspace.",
    )
    outcome_probe: str | None = Field(
        default=None,
        description="`module:function(workspace, result, case)` reading what a trial left.",
    )
    max_error_rate: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="`caseforge run` exits 4 when a larger share of a configuration's "
        "case-trials end in an agent error (exception, timeout, invalid answer, failed probe).",
    )
    freeze_clock: bool = Field(
        default=True,
        description="Freeze the process clock for in-process agents where that is safe.",
    )
    judge: ModelSettings | None = None
    synth: SynthSettings | None = None
    simulator: ModelSettings | None = Field(
        default=None, description="The model that plays a multi-turn case's `user: {model: true}`."
    )
    prices: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="USD per million tokens by model: {model: {input: …, output: …}}.",
    )
    rate_limit: RateLimit | None = Field(
        default=None, description="rpm/tpm for the agent's ctx.llm() calls, across the run."
    )
    dedup: DedupConfig = Field(default_factory=DedupConfig)
    split: SplitConfig = Field(default_factory=SplitConfig)
    gate: GateConfig = Field(default_factory=GateConfig)
    privacy: PrivacyConfig = Field(default_factory=PrivacyConfig)
    otel: OtelConfig = Field(default_factory=OtelConfig)


CONFIG_SCHEMA_ID = "https://caseforge.example/config.schema.json"


def config_json_schema() -> JSONObject:
    """The JSON Schema of ``caseforge.yaml`` (``caseforge schema --config``), for editors."""
    schema = SuiteConfig.model_json_schema()
    schema["$id"] = CONFIG_SCHEMA_ID
    schema["title"] = "caseforge.yaml"
    data: JSONObject = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return data
