"""The promptfoo assertions that have no caseforge check, and why: the report's reasons.

Each type belongs to a family (``similar`` and its ``similar:*`` forms, the trajectory
assertions, tool-call validity…); a family has the kind of reason the counts use and what
the report says. ``not-`` forms share their type's.
"""

from __future__ import annotations

NEGATED = "a negated model-graded or metric assertion: caseforge's judge has no negation"

# Types with no caseforge check: the kind of reason (for counts) and what the report says.
REPORTED: dict[str, tuple[str, str]] = {
    "similar": (
        "needs an embedding model",
        "promptfoo compares embeddings against a "
        "threshold; caseforge has no embedding check (a judge rubric can say what "
        "the reply must mean)",
    ),
    "trajectory": (
        "trajectory assertion",
        "grades the agent's trajectory as promptfoo reads it from the trace (the tools "
        "used, their order and arguments, the goal); say it as a tool_calls check (its "
        "must_call, order and count), which reads the agent's calls or those its spans show",
    ),
    "tool-validity": (
        "tool-call validity",
        "checks the output's tool calls against the "
        "provider's tool schemas; caseforge's tool_calls check grades calls by "
        "name and arguments, not against a schema",
    ),
    "guardrails": (
        "provider guardrails",
        "reads the provider's own guardrail flags, which the agent does not report",
    ),
    "moderation": ("needs a moderation API", "asks a moderation API to flag the output"),
    "classifier": ("needs a classifier model", "runs a Hugging Face classifier over the output"),
    "pi": ("needs a scoring model", "asks Pi Labs' scoring model"),
    "context": (
        "grades the retrieved context",
        "grades the retrieved context (vars.context) against the query, not the reply",
    ),
    "text-metric": (
        "text-similarity metric",
        "a text-similarity score (BLEU, ROUGE, Levenshtein…) caseforge has no mode for",
    ),
    "perplexity": ("needs log probabilities", "needs the provider's log probabilities"),
    "finish-reason": (
        "finish reason",
        "reads the provider's finish reason, which the agent does not report",
    ),
    "sql": ("needs a SQL parser", "needs a SQL parser"),
    "html": ("markup check", "checks HTML or XML that caseforge has no mode for"),
    "refusal": ("refusal heuristic", "promptfoo's refusal heuristic"),
    "webhook": ("webhook", "asks a web service to grade the output"),
    "ruby": ("Ruby code", "Ruby code: caseforge runs JavaScript and Python checks"),
    "human": ("graded by people", "graded by people in promptfoo's viewer"),
    "comparison": (
        "compares outputs",
        "compares the outputs of several providers or prompts "
        "for one test; caseforge grades each case-trial on its own",
    ),
    "assert-set": ("assert-set", "a group of assertions scored against its own threshold"),
    "negated": (
        "negated model-graded",
        "a negated model-graded or metric assertion: caseforge's judge has no negation",
    ),
}
FAMILY = {
    **dict.fromkeys(("similar", "similar:cosine", "similar:dot", "similar:euclidean"), "similar"),
    **dict.fromkeys(
        (
            "trajectory:goal-success",
            "trajectory:tool-args-match",
            "trajectory:step-count",
            "trajectory:tool-sequence",
            "trajectory:tool-used",
            "skill-used",
        ),
        "trajectory",
    ),
    **dict.fromkeys(
        (
            "is-valid-openai-tools-call",
            "is-valid-openai-function-call",
            "is-valid-function-call",
            "tool-call-f1",
        ),
        "tool-validity",
    ),
    "guardrails": "guardrails",
    "moderation": "moderation",
    "classifier": "classifier",
    "pi": "pi",
    "context-recall": "context",
    "context-relevance": "context",
    **dict.fromkeys(("levenshtein", "rouge-n", "bleu", "gleu", "meteor", "f-score"), "text-metric"),
    "perplexity": "perplexity",
    "perplexity-score": "perplexity",
    "finish-reason": "finish-reason",
    "is-sql": "sql",
    "contains-sql": "sql",
    "is-html": "html",
    "contains-html": "html",
    "contains-xml": "html",
    "is-refusal": "refusal",
    "webhook": "webhook",
    "ruby": "ruby",
    "human": "human",
    "select-best": "comparison",
    "max-score": "comparison",
    "assert-set": "assert-set",
}


def no_check(kind: str) -> tuple[str, str] | None:
    """The kind of reason and the report's words for an assertion type with no check, or
    ``None`` when it has one."""
    family = FAMILY.get(kind) or FAMILY.get(kind.removeprefix("not-"))
    return None if family is None else REPORTED[family]
