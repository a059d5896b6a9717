"""Grading one case-trial: every check of the case against what the agent returned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from caseforge.agent.protocol import AgentResult
from caseforge.case.model import REPLIES, Case
from caseforge.checks import (
    BaseCheck,
    Check,
    ExactCheck,
    IncludeShorthand,
    Reads,
    ToolCallsCheck,
    TrialFacts,
    UndeclaredCheck,
)
from caseforge.errors import EnvError, suite_exit
from caseforge.jsontypes import JSONObject, JSONValue
from caseforge.results import (
    ACTUAL_BYTES,
    CheckResult,
    CheckStatus,
    TrialStatus,
    trial_status,
)
from caseforge.tracing.spans import SpanData, tool_calls

# Said by a tool-call check graded on calls read from the agent's spans (it reported none).
FROM_SPANS = "tool calls derived from the agent's spans (it reported none)"
NO_CALLS = (
    "the agent reported no `tool_calls` and sent no spans: not judged. Return `tool_calls` "
    "(`[]` when it called none), or instrument it with OpenTelemetry (see the tracing guide)"
)

APPROVAL_CHECK = "approval_pause"
_FIELD = Reads.FIELD  # enum members read through a class descriptor: look them up once
_FAIL = CheckStatus.FAIL
MISSING = object()  # what lookup() returns for a field the output lacks
TRANSCRIPT = "transcript"  # reserved: a conversation's messages, as text
TURN_COUNT = "turn_count"  # reserved: how many agent turns a conversation took
RESERVED_FIELDS = ("reply", "tool_calls", TRANSCRIPT, TURN_COUNT, REPLIES)
MAX_TURNS_CHECK = "max_turns"


@dataclass(frozen=True)
class GradeOptions:
    """How checks that need more than code are treated."""

    judge: str = "not_judged"  # "not_judged" (no model) or "skip" (judging turned off by hand)
    judge_reason: str = (
        "no LLM judge in this version of caseforge: not judged "
        "(pass --no-judge to skip judge checks on purpose)"
    )


def lookup(result: AgentResult, path: str, turn: int | None = None) -> object:
    """The value of a dotted field path in the agent's output (``reply``, ``tool_calls`` are
    the reply text and the called tool names). In a conversation, ``transcript`` is every
    message as text, ``replies`` every agent reply (a list, in order), ``turn_count`` the
    number of agent turns, and ``turn`` picks one agent turn instead of the last."""
    if turn is None:  # the common case first: a single-turn case's fields
        if path == "reply":
            return result.reply
        if path == "tool_calls":
            return [call.name for call in result.tool_calls]
        if path == TRANSCRIPT:
            if not result.transcript:
                return result.reply
            return "\n".join(f"{t.role}: {t.content}" for t in result.transcript)
        if path == TURN_COUNT:
            return sum(1 for t in result.transcript if t.role == "agent") or 1
        if path == REPLIES:
            return agent_replies(result)
        return _dotted(result.output, path)
    said = next((t for t in result.transcript if t.role == "agent" and t.turn == turn), None)
    if said is None:
        return MISSING
    if path == "reply":
        return said.content
    if path == "tool_calls":
        return [call.name for call in said.tool_calls]
    return _dotted(said.output or {}, path)


def agent_replies(result: AgentResult) -> list[str]:
    """Every agent reply, in order: a conversation's agent turns, else the one reply."""
    if not result.transcript:
        return [result.reply]
    return [t.content for t in result.transcript if t.role == "agent"]


def replies_text(replies: list[str]) -> str:
    """The replies as one text for a reader (the judge): each numbered, apart."""
    return "\n\n".join(f"[reply {n}] {reply}" for n, reply in enumerate(replies, start=1))


def _dotted(output: dict[str, object], path: str) -> object:
    value: object = output
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def grade_trial(
    case: Case,
    result: AgentResult,
    outcomes: dict[str, object] | None = None,
    options: GradeOptions = GradeOptions(),
    outcome_error: str | None = None,
    latency_s: float | None = None,
    spans: Sequence[SpanData] | None = None,
    spans_missing: str | None = None,
) -> tuple[TrialStatus, list[CheckResult]]:
    """Grade every check of ``case``; return the case-trial's status and each check's result.

    ``outcomes`` is what the suite's outcome probe read from the trial's workspace, by field.
    ``latency_s`` is the case-trial's recorded latency (``latency`` checks read it; without
    it they are not judged). ``spans`` are the agent's OpenTelemetry spans (``spans`` checks
    read them; tool-call checks read the tool calls they show when the agent reported
    none); ``spans_missing`` is why none came, when the run knows. When the agent paused
    for approval without a reply, checks on the reply cannot be judged; instead the case
    must expect the pause (``needs_approval: true``).
    """
    paused = result.paused_for_approval and not result.reply.strip()
    results: list[CheckResult] = []
    checks = case.checks()
    facts = (
        trial_facts(case, result, latency_s, spans, spans_missing) if _reads_trial(checks) else None
    )
    derived = derived_calls(result, spans)
    if derived is None and not result.tool_calls_given and not spans:
        derived = UNKNOWN_CALLS  # neither reported nor traced: a tool-call check cannot judge
    for name, field, check in checks:
        graded = _grade_one(
            name, field, check, result, outcomes, options, outcome_error, paused, facts, derived
        )
        if graded.reason == NO_CALLS and spans_missing:
            graded.reason = f"{NO_CALLS} ({spans_missing})"
        results.append(graded)
    if paused:
        results.append(_approval_check(case))
    if result.ended_by == "max_turns" and case.conversation is not None:
        limit = case.conversation.max_turns
        reason = f"the conversation reached max_turns ({limit}) without the agent or user ending it"
        results.append(CheckResult(MAX_TURNS_CHECK, "conversation", _FAIL, limit, limit, reason))
    return trial_status(results), results


def _reads_trial(checks: list[tuple[str, str, Check]]) -> bool:
    for _, _, check in checks:
        if isinstance(check, BaseCheck) and (check.uses_trial or check.reads is _TRIAL):
            return True
    return False


_TRIAL = Reads.TRIAL


# The tool calls of a trial whose agent neither reported them nor sent spans: unknown.
UNKNOWN_CALLS: list[JSONObject] = []


def derived_calls(result: AgentResult, spans: Sequence[SpanData] | None) -> list[JSONObject] | None:
    """The tool calls the agent's spans show (``gen_ai.tool.name``, OpenInference's
    ``tool.name``), when the agent reported none itself; else None (its own are graded).
    An agent that left ``tool_calls`` out and sent spans showing none called none: ``[]``."""
    if result.tool_calls or not spans or any(t.tool_calls for t in result.transcript):
        return None
    found = tool_calls(spans)
    if found or not result.tool_calls_given:
        return found
    return None


def trial_facts(
    case: Case,
    result: AgentResult,
    latency_s: float | None,
    spans: Sequence[SpanData] | None = None,
    spans_missing: str | None = None,
) -> TrialFacts:
    """What the checks that read the case-trial see: the case, the agent's cost (``None``
    when it reported no usage at all), the latency and the agent's spans."""
    usage = result.usage
    reported = usage.cost_usd or usage.input_tokens or usage.output_tokens
    description = case.provenance.get("description")
    return TrialFacts(
        case_id=case.id,
        input=case.input,
        description=description if isinstance(description, str) else (case.note or None),
        cost_usd=usage.cost_usd if reported else None,
        latency_s=latency_s,
        spans=spans,
        spans_missing=spans_missing,
    )


def _grade_one(
    name: str,
    field: str,
    check: Check,
    result: AgentResult,
    outcomes: dict[str, object] | None,
    options: GradeOptions,
    outcome_error: str | None,
    paused: bool,
    facts: TrialFacts | None = None,
    derived: list[JSONObject] | None = None,
) -> CheckResult:
    mode = check.mode
    if paused and (isinstance(check, ToolCallsCheck) or _earlier_turn(check, result)):
        paused = False  # the calls were made, and an earlier agent turn has its reply
    if field == REPLIES and isinstance(check, BaseCheck) and check.reads is _FIELD:
        return _grade_replies(name, check, result, paused, facts)
    # The common case first, with as little work as it can be done with: one case-trial
    # grades several checks and a run grades tens of thousands of case-trials.
    if not paused and (check.reads if isinstance(check, BaseCheck) else _FIELD) is _FIELD:
        if isinstance(check, (UndeclaredCheck, IncludeShorthand)):
            return _undeclared(name, mode)
        expected = check.expected
        turn = check.turn
        if derived is UNKNOWN_CALLS and (
            isinstance(check, ToolCallsCheck) or field == "tool_calls"
        ):
            return CheckResult(name, mode, CheckStatus.NOT_JUDGED, expected, None, NO_CALLS)
        if isinstance(check, ToolCallsCheck):  # the calls with their arguments
            if derived is not None:
                return _from_spans(name, mode, check, expected, derived, turn)
            calls = [
                {"name": c.name, "args": c.args}
                for c in result.tool_calls
                if turn is None or getattr(c, "turn", None) == turn
            ]
            return _verdict(name, mode, check, expected, calls, "tool_calls")
        if derived is not None and field == "tool_calls":
            names = [c["name"] for c in derived if turn is None or c.get("turn") == turn]
            return _from_spans(name, mode, check, expected, names, None)
        actual = lookup(result, field, turn)
        if actual is MISSING:
            reason = (
                f"the conversation has no agent turn {turn} with {field!r}"
                if turn is not None
                else f"no field {field!r} in the output"
            )
            return CheckResult(name, mode, _FAIL, expected, None, reason)
        return _verdict(name, mode, check, expected, actual, field, turn, facts)
    if isinstance(check, (UndeclaredCheck, IncludeShorthand)):
        return _undeclared(name, mode)
    expected = check.expected
    reads = check.reads if isinstance(check, BaseCheck) else Reads.FIELD
    if reads is Reads.NOTHING:
        return CheckResult(
            name, mode, CheckStatus.SKIPPED, reason=str(getattr(check, "reason", ""))
        )
    if reads is Reads.JUDGE:
        target = getattr(check, "field", None) or "reply"
        if paused and target == "reply":
            return CheckResult(name, mode, CheckStatus.CANNOT_JUDGE, expected, None, _PAUSED)
        status = CheckStatus.SKIPPED if options.judge == "skip" else CheckStatus.NOT_JUDGED
        reason = (
            "judging turned off (--no-judge)" if options.judge == "skip" else options.judge_reason
        )
        return CheckResult(name, mode, status, expected, None, reason)
    if reads is Reads.TRIAL:
        assert facts is not None and isinstance(check, BaseCheck)
        return _verdict(name, mode, check, expected, check.measured(facts), "trial")
    if reads is Reads.WORKSPACE:
        if outcome_error is not None:
            return CheckResult(name, mode, CheckStatus.ERROR, expected, None, outcome_error)
        if outcomes is None or field not in outcomes:
            reason = (
                "no outcome_probe in caseforge.yaml"
                if outcomes is None
                else f"the outcome probe returned no {field!r}"
            )
            return CheckResult(name, mode, CheckStatus.ERROR, expected, None, reason)
        return _verdict(name, mode, check, expected, outcomes[field], f"outcomes.{field}")
    else:
        if paused and field == "reply":
            return CheckResult(name, mode, CheckStatus.CANNOT_JUDGE, expected, None, _PAUSED)
        turn = getattr(check, "turn", None)
        actual = lookup(result, field, turn)
        if actual is MISSING:
            return CheckResult(
                name, mode, CheckStatus.FAIL, expected, None, f"no field {field!r} in the output"
            )
    return _verdict(name, mode, check, expected, actual, field, turn, facts)


def _from_spans(
    name: str,
    mode: str,
    check: BaseCheck | ToolCallsCheck,
    expected: object,
    derived: Sequence[JSONValue],
    turn: int | None,
) -> CheckResult:
    """A check on tool calls graded on those the agent's spans show: its reason says so."""
    calls: list[object] = [
        {"name": c["name"], "args": c["args"]} if isinstance(c, dict) else c
        for c in derived
        if turn is None or not isinstance(c, dict) or c.get("turn") == turn
    ]
    result = _verdict(name, mode, check, expected, calls, "tool_calls")
    result.reason = f"{result.reason} ({FROM_SPANS})" if result.reason else FROM_SPANS
    return result


def _grade_replies(
    name: str, check: BaseCheck, result: AgentResult, paused: bool, facts: TrialFacts | None
) -> CheckResult:
    """A check on ``replies``: every agent reply, one at a time (``BaseCheck.grade_replies``).
    After an approval pause the turn that paused has no reply: what the earlier replies
    decide stands (a pass, or a forbidden thing said), and a requirement none of them meets
    cannot be judged, since the reply never written might have met it."""
    replies = agent_replies(result)
    if paused:
        replies = replies[:-1]
    expected = check.expected
    graded = _verdict(name, check.mode, check, expected, replies, REPLIES, None, facts, each=True)
    if paused and graded.status is _FAIL and not check.forbids:
        return CheckResult(
            name, check.mode, CheckStatus.CANNOT_JUDGE, expected, replies, f"{_PAUSED}; "
            f"no earlier reply meets it ({graded.reason})"
        )  # fmt: skip
    return graded


def _earlier_turn(check: Check, result: AgentResult) -> bool:
    """A check pinned to an agent turn before the last one (whose reply the pause lacks)."""
    turn = getattr(check, "turn", None)
    if not isinstance(turn, int) or not result.transcript:
        return False
    return turn < max(t.turn for t in result.transcript)


def _undeclared(name: str, mode: str) -> CheckResult:
    reason = (
        f"no declaration of check mode {mode!r}: name the suite's checks module in "
        "caseforge.yaml (`checks: checks.py`)"
    )
    return CheckResult(name, mode, CheckStatus.ERROR, None, None, reason)


def response_ref(field: str, turn: int | None = None) -> str:
    """Where in the stored response the whole value of ``field`` is (a cut ``actual``
    points there): ``reply``, ``output.summary``, ``transcript[agent turn 2].content``."""
    if field == "tool_calls" or field.startswith("outcomes."):
        where = field
    elif field == "reply":
        where = "reply" if turn is None else "content"
    elif field in (TRANSCRIPT, TURN_COUNT, REPLIES):
        return "transcript"
    else:
        where = f"output.{field}"
    return where if turn is None else f"transcript[agent turn {turn}].{where}"


def _verdict(
    name: str,
    mode: str,
    check: BaseCheck | ToolCallsCheck,
    expected: object,
    actual: object,
    field: str,
    turn: int | None = None,
    facts: TrialFacts | None = None,
    each: bool = False,
) -> CheckResult:
    result = _graded(name, mode, check, expected, actual, facts, each)
    kept = result.actual
    if type(kept) is str and len(kept) <= ACTUAL_BYTES // 4:  # the common case: it fits
        return result
    if not each and getattr(check, "items_field", None) is not None:
        # An item check's actual is the list its precision and recall are counted from
        # (the summary, compare, baselines): it is kept whole, never cut into text.
        return result
    if isinstance(kept, str | dict | list):
        return result.cut(response_ref(field, turn))
    return result


def _graded(
    name: str,
    mode: str,
    check: BaseCheck | ToolCallsCheck,
    expected: object,
    actual: object,
    facts: TrialFacts | None = None,
    each: bool = False,
) -> CheckResult:
    try:
        if each and isinstance(check, BaseCheck) and isinstance(actual, list):
            verdict = check.grade_replies(actual, facts)
        elif facts is not None and isinstance(check, BaseCheck) and check.uses_trial:
            verdict = check.grade_in(actual, facts)
        else:
            verdict = check.grade(actual)
    except EnvError:  # the machine lacks what the mode needs: not the check's verdict
        raise
    except Exception as exc:  # a suite's own mode must not take the run down
        reason = f"grading raised {type(exc).__name__}: {exc}"
        return CheckResult(name, mode, CheckStatus.ERROR, expected, actual, reason)
    except (SystemExit, KeyboardInterrupt) as exc:  # nor end caseforge
        failure = suite_exit(exc)
        if failure is None:
            raise
        reason = f"grading {failure}"
        return CheckResult(name, mode, CheckStatus.ERROR, expected, actual, reason)
    if not isinstance(verdict, tuple) or len(verdict) != 2:
        reason = f"grade() returned {verdict!r}, not a Verdict (use passed() or failed(...))"
        return CheckResult(name, mode, CheckStatus.ERROR, expected, actual, reason)
    status, reason = verdict
    if type(status) is not CheckStatus:  # a user's mode may return the plain string
        status = CheckStatus(status)
    if isinstance(check, BaseCheck):
        actual = check.kept(actual)
    return CheckResult(name, mode, status, expected, actual, str(reason))


_PAUSED = "paused for approval before replying: the reply cannot be judged"


def _approval_check(case: Case) -> CheckResult:
    wanted = case.expect.get("needs_approval")
    expects_pause = isinstance(wanted, ExactCheck) and wanted.value is True
    if expects_pause:
        return CheckResult(APPROVAL_CHECK, "approval", CheckStatus.PASS, True, True)
    return CheckResult(
        APPROVAL_CHECK,
        "approval",
        CheckStatus.FAIL,
        False,
        True,
        "paused for supervisor approval, but the case does not expect approval",
    )
