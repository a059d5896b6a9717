"""promptfoo's assertions as caseforge checks, row by row of the mapping table
(`interop/promptfoo_asserts.py`): each row's check, and the check graded on replies as
promptfoo's own handler would grade them (the same replies pass and fail in both)."""

from __future__ import annotations

from pathlib import Path

import pytest

from caseforge.case.model import Case
from caseforge.checks.base import BaseCheck, TrialFacts
from caseforge.interop.nunjucks import render
from caseforge.interop.promptfoo_asserts import Context, Mapped, map_assertion
from caseforge.results import CheckStatus


def mapped(
    assertion: dict[str, object], transforms: list[object] | None = None, judge: bool = False
) -> Mapped:
    variables = {"city": "Lumenport", "context": "Lumenport is the capital of Vandoria."}
    context = Context(Path("."), variables, lambda t: render(t, variables)[0], judge=judge)
    return map_assertion(assertion, context, transforms or [])


def check_of(result: Mapped) -> BaseCheck:
    case = Case.model_validate({"id": "x", "input": {}, "expect": {"k": result.check}})
    check = case.expect["k"]
    assert isinstance(check, BaseCheck)
    return check


def passes(result: Mapped, reply: str) -> bool:
    check = check_of(result)
    verdict = check.grade_in(reply, TrialFacts("x", {"prompt": "Where?"}, cost_usd=0.001))
    assert verdict.status in (CheckStatus.PASS, CheckStatus.FAIL), verdict
    return verdict.status is CheckStatus.PASS


# (assertion, the check it becomes, replies that pass, replies that fail)
ROWS: list[tuple[dict[str, object], dict[str, object], list[str], list[str]]] = [
    (
        {"type": "equals", "value": "Lumenport"},
        {"mode": "exact", "field": "reply", "value": "Lumenport"},
        ["Lumenport"],
        ["lumenport", "Lumenport."],
    ),
    (
        {"type": "not-equals", "value": 7},
        {"mode": "exact", "field": "reply", "value": "7", "negate": True},
        ["seven"],
        ["7"],
    ),
    (
        {"type": "contains", "value": "{{city}}"},
        {"mode": "must_include", "field": "reply", "values": ["Lumenport"]},
        ["It is Lumenport."],
        ["It is lumenport."],
    ),
    (
        {"type": "icontains", "value": "lumenport"},
        {"mode": "must_include", "field": "reply", "values": ["lumenport"],
         "case_sensitive": False},
        ["LUMENPORT"],
        ["Saltreach"],
    ),
    (
        {"type": "contains-all", "value": ["Lumenport", "Arden"]},
        {"mode": "must_include", "field": "reply", "values": ["Lumenport", "Arden"]},
        ["The Arden runs through Lumenport."],
        ["Lumenport"],
    ),
    (
        {"type": "icontains-all", "value": "lumenport, arden"},
        {"mode": "must_include", "field": "reply", "values": ["lumenport", "arden"],
         "case_sensitive": False},
        ["The ARDEN, Lumenport"],
        ["Arden only"],
    ),
    (
        {"type": "contains-any", "value": ["Saltreach", "Ostmere"]},
        {"mode": "must_include", "field": "reply", "values": ["Saltreach", "Ostmere"],
         "match": "any"},
        ["Ostmere"],
        ["Lumenport"],
    ),
    (
        {"type": "icontains-any", "value": 'saltreach,"ost, mere"'},
        {"mode": "must_include", "field": "reply", "values": ["saltreach", "ost, mere"],
         "match": "any", "case_sensitive": False},
        ["OST, MERE"],
        ["Ostmere"],
    ),
    (
        {"type": "not-contains", "value": "sorry"},
        {"mode": "must_not_include", "field": "reply", "values": ["sorry"]},
        ["Sorry, no."],
        ["sorry, no."],
    ),
    (
        {"type": "not-icontains", "value": "sorry"},
        {"mode": "must_not_include", "field": "reply", "values": ["sorry"],
         "case_sensitive": False},
        ["Happy to help."],
        ["SORRY"],
    ),
    (
        {"type": "not-contains-any", "value": ["refund", "credit"]},
        {"mode": "must_not_include", "field": "reply", "values": ["refund", "credit"]},
        ["No money back."],
        ["A credit note."],
    ),
    (
        {"type": "not-icontains-any", "value": ["refund"]},
        {"mode": "must_not_include", "field": "reply", "values": ["refund"],
         "case_sensitive": False},
        ["No."],
        ["REFUND"],
    ),
    (
        {"type": "starts-with", "value": "Yes (really)"},
        {"mode": "regex", "field": "reply", "value": "\\AYes\\ \\(really\\)"},
        ["Yes (really), it is."],
        ["Oh, Yes (really)", "Yes really"],
    ),
    (
        {"type": "not-starts-with", "value": "Sorry"},
        {"mode": "regex", "field": "reply", "value": "\\ASorry", "negate": True},
        ["I am sorry"],
        ["Sorry."],
    ),
    (
        {"type": "regex", "value": "^ORD-\\d+$"},
        {"mode": "regex", "field": "reply", "value": "^ORD-[0-9]+\\Z"},
        ["ORD-42"],
        ["ORD-42\n", "ORD-٤٢"],
    ),
    (
        {"type": "not-regex", "value": "(?<word>\\w+) \\k<word>"},
        {"mode": "regex", "field": "reply", "value": "(?P<word>[A-Za-z0-9_]+) (?P=word)",
         "negate": True},
        ["one two"],
        ["go go"],
    ),
    (
        {"type": "is-json"},
        {"mode": "json", "field": "reply"},
        ['{"city": "Lumenport"}'],
        ["city: Lumenport"],
    ),
    (
        {"type": "is-json", "value": {"type": "object", "required": ["city"]}},
        {"mode": "json", "field": "reply",
         "schema": {"type": "object", "required": ["city"]}},
        ['{"city": "Lumenport"}'],
        ['{"town": "Lumenport"}'],
    ),
    (
        {"type": "contains-json", "value": "type: object\nrequired: [city]"},
        {"mode": "json", "field": "reply", "find": True,
         "schema": {"type": "object", "required": ["city"]}},
        ['Here: {"city": "Lumenport"} — enjoy.'],
        ["No JSON here."],
    ),
    (
        {"type": "llm-rubric", "value": "Names the capital of {{city}}'s country"},
        {"mode": "judge", "field": "reply", "rubric": "Names the capital of Lumenport's country"},
        [],
        [],
    ),
    (
        {"type": "model-graded-closedqa", "value": "Says where the Arden runs"},
        {"mode": "judge", "field": "reply", "rubric": "Says where the Arden runs"},
        [],
        [],
    ),
    (
        {"type": "factuality", "value": "Lumenport is the capital"},
        {"mode": "judge", "field": "reply", "rubric": "The reply is factually consistent with "
         "this reference answer: Lumenport is the capital"},
        [],
        [],
    ),
    (
        {"type": "context-faithfulness"},
        {"mode": "judge", "field": "reply", "rubric": "Every claim the reply makes is supported "
         "by this context: Lumenport is the capital of Vandoria."},
        [],
        [],
    ),
    (
        {"type": "cost", "threshold": 0.002},
        {"mode": "cost", "max_usd": 0.002},
        [],
        [],
    ),
    (
        {"type": "latency", "threshold": 1500},
        {"mode": "latency", "max_ms": 1500},
        [],
        [],
    ),
    (
        {"type": "javascript", "value": "output.includes(context.vars.city ?? 'Lumenport')"},
        {"mode": "javascript", "field": "reply",
         "code": "output.includes(context.vars.city ?? 'Lumenport')"},
        ["Lumenport"],
        ["Saltreach"],
    ),
    (
        {"type": "javascript", "value": "output.length / 10", "threshold": 0.5},
        {"mode": "javascript", "field": "reply", "code": "output.length / 10", "threshold": 0.5},
        ["Lumenport"],
        ["Ost"],
    ),
    (
        {"type": "python", "value": "'Lumenport' in output"},
        {"mode": "python", "field": "reply", "code": "'Lumenport' in output"},
        ["Lumenport"],
        ["Saltreach"],
    ),
    (
        {"type": "not-contains-all", "value": ["Lumenport", "Arden"]},
        {"mode": "javascript", "field": "reply",
         "code": '!["Lumenport", "Arden"].every((v) => String(output).includes(v))'},
        ["Lumenport"],
        ["Arden and Lumenport"],
    ),
    (
        {"type": "not-is-json"},
        {"mode": "javascript", "field": "reply", "code": "(() => { try { JSON.parse(output); "
         "return false; } catch (e) { return true; } })()"},
        ["plain words"],
        ["[1, 2]"],
    ),
    (
        {"type": "word-count", "value": {"min": 2, "max": 3}},
        {"mode": "javascript", "field": "reply", "code": "((n) => n >= 2 && n <= 3)("
         "String(output).trim().split(/\\s+/).filter(Boolean).length)"},
        ["Lumenport is nice"],
        ["Lumenport", "one two three four"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("assertion", "check", "good", "bad"), ROWS, ids=lambda v: str(v)[:40])
def test_each_row_of_the_mapping_table(
    assertion: dict[str, object], check: dict[str, object], good: list[str], bad: list[str]
) -> None:
    result = mapped(assertion)
    assert result.mapped, result.reason
    assert result.check == check
    for reply in good:
        assert passes(result, reply), reply
    for reply in bad:
        assert not passes(result, reply), reply


def test_equals_with_an_object_compares_the_reply_parsed_as_json() -> None:
    result = mapped({"type": "equals", "value": {"city": "Lumenport", "rank": 1}})
    assert result.check["mode"] == "python"
    assert passes(result, '{"rank": 1, "city": "Lumenport"}')  # key order does not count
    assert not passes(result, '{"city": "Lumenport"}')
    assert not passes(result, "not JSON")
    negated = mapped({"type": "not-equals", "value": [1, 2]})
    assert passes(negated, "[2, 1]") and passes(negated, "oops") and not passes(negated, "[1,2]")


def test_is_xml_without_a_value_is_a_python_check() -> None:
    result = mapped({"type": "is-xml"})
    assert passes(result, "<city>Lumenport</city>")
    assert not passes(result, "<city>Lumenport")


def test_the_model_graded_kinds_are_judge_checks_and_say_what_differs() -> None:
    result = mapped({"type": "llm-rubric", "value": "Is polite", "threshold": 0.8,
                     "provider": "openai:gpt-4.1"})  # fmt: skip
    assert result.check == {"mode": "judge", "field": "reply", "rubric": "Is polite"}
    assert any("0.8" in note and "yes or no" in note for note in result.notes)
    assert any("own grader" in note for note in result.notes)
    relevance = mapped({"type": "answer-relevance"})
    assert relevance.check["rubric"] == (
        "The reply is relevant to, and answers, the question it was asked: the prompt"
    )
    assert mapped({"type": "g-eval", "value": ["Clear", "Correct"]}).check["rubric"] == (
        "The reply meets these criteria: Clear; Correct"
    )
    search = mapped({"type": "search-rubric", "value": "Gives today's weather"})
    assert search.mapped and any("searches the web" in n for n in search.notes)


def test_a_rule_the_judge_cannot_say_is_reported() -> None:
    for kind in ("context-recall", "context-relevance", "not-llm-rubric"):
        result = mapped({"type": kind, "value": "x"})
        assert not result.mapped and result.check["mode"] == "ignore"


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("similar", "needs an embedding model"),
        ("similar:cosine", "needs an embedding model"),
        ("trajectory:tool-used", "trajectory assertion"),
        ("trajectory:tool-sequence", "trajectory assertion"),
        ("is-valid-openai-tools-call", "tool-call validity"),
        ("guardrails", "provider guardrails"),
        ("moderation", "needs a moderation API"),
        ("classifier", "needs a classifier model"),
        ("levenshtein", "text-similarity metric"),
        ("is-sql", "needs a SQL parser"),
        ("select-best", "compares outputs"),
        ("max-score", "compares outputs"),
        ("assert-set", "assert-set"),
        ("ruby", "Ruby code"),
        ("webhook", "webhook"),
        ("finish-reason", "finish reason"),
        ("perplexity", "needs log probabilities"),
        ("min-length", "unknown type"),
    ],
)
def test_what_has_no_check_is_an_ignore_check_saying_why(kind: str, reason: str) -> None:
    result = mapped({"type": kind, "value": "x", "threshold": 0.8})
    assert not result.mapped
    assert result.kind == reason
    assert result.check["mode"] == "ignore"
    assert kind in str(result.check["reason"]) and result.reason in str(result.check["reason"])


def test_similar_becomes_a_judge_check_where_the_suite_has_a_judge() -> None:
    result = mapped({"type": "similar", "value": "The capital is {{city}}", "threshold": 0.9},
                    judge=True)  # fmt: skip
    assert result.check == {"mode": "judge", "field": "reply",
                            "rubric": "The reply means the same as this text: The capital is "
                            "Lumenport"}  # fmt: skip
    assert any("0.9" in note and "embeddings" in note for note in result.notes)


def test_a_regex_python_cannot_read_the_same_way_is_reported() -> None:
    result = mapped({"type": "regex", "value": "\\p{Lu}+"})
    assert not result.mapped and result.kind == "regex not translated"
    assert "Unicode property" in result.reason
    lookbehind = mapped({"type": "regex", "value": "(?<=a+)b"})
    assert not lookbehind.mapped and "refuses" in lookbehind.reason


def test_code_that_needs_node_is_reported_as_such() -> None:
    result = mapped({"type": "javascript", "value": "require('fs').existsSync('x')"})
    assert not result.mapped and result.kind == "needs Node"
    assert "needs Node" in result.reason


def test_script_files_are_copied_into_the_suite(tmp_path: Path) -> None:
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "grade.py").write_text(
        "def check_city(output, context):\n    return 'Lumenport' in output\n", encoding="utf-8"
    )
    (tmp_path / "length.js").write_text(
        "module.exports = (output) => output.length < 40;\n", encoding="utf-8"
    )
    (tmp_path / "node.js").write_text("const fs = require('fs');\n", encoding="utf-8")
    (tmp_path / "typed.ts").write_text("export default () => true;\n", encoding="utf-8")
    variables: dict[str, object] = {}
    context = Context(tmp_path, variables, lambda t: t)
    python = map_assertion({"type": "python", "value": "file://checks/grade.py:check_city"},
                           context)  # fmt: skip
    assert python.check == {"mode": "python", "field": "reply", "file": "asserts/checks/grade.py",
                            "function": "check_city"}  # fmt: skip
    javascript = map_assertion({"type": "javascript", "value": "file://length.js"}, context)
    assert javascript.check == {"mode": "javascript", "field": "reply", "file": "asserts/length.js"}
    assert set(context.files) == {"asserts/checks/grade.py", "asserts/length.js"}
    node = map_assertion({"type": "javascript", "value": "file://node.js"}, context)
    assert node.kind == "needs Node" and "node.js" in node.reason
    typed = map_assertion({"type": "javascript", "value": "file://typed.ts"}, context)
    assert typed.kind == "TypeScript"
    missing = map_assertion({"type": "python", "value": "file://gone.py"}, context)
    assert missing.kind == "missing file" and "gone.py" in missing.reason
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("Names the capital\n", encoding="utf-8")
    judged = map_assertion({"type": "llm-rubric", "value": "file://rubric.txt"}, context)
    assert judged.check["rubric"] == "Names the capital"


def test_a_transform_becomes_javascript_that_runs_it_first() -> None:
    result = mapped({"type": "icontains", "value": "lumenport", "transform": "output.text"})
    assert result.mapped and result.check["mode"] == "javascript"
    check = check_of(result)
    facts = TrialFacts("x", {})
    assert check.grade_in({"text": "In LUMENPORT"}, facts).status is CheckStatus.PASS
    assert check.grade_in({"text": "In Ostmere"}, facts).status is CheckStatus.FAIL
    chained = mapped({"type": "equals", "value": {"color": "blue"}, "transform": "output.input"},
                     transforms=["JSON.parse(output)"])  # fmt: skip
    chained_check = check_of(chained)
    verdict = chained_check.grade_in('{"input": {"color": "blue"}}', facts)
    assert verdict.status is CheckStatus.PASS
    assert chained_check.grade_in('{"input": {"color": "red"}}', facts).status is CheckStatus.FAIL


def test_a_transform_without_a_javascript_form_is_reported() -> None:
    result = mapped({"type": "llm-rubric", "value": "Polite", "transform": "output.text"})
    assert not result.mapped and result.kind == "transform"
    scripted = mapped({"type": "contains", "value": "x", "transform": "file://t.js"})
    assert not scripted.mapped and "script" in scripted.reason
    # Trimming does not change what a judge reads; parsing JSON does not change is-json.
    assert mapped({"type": "llm-rubric", "value": "Polite"}, transforms=["output.trim()"]).mapped
    assert mapped({"type": "is-json"}, transforms=["JSON.parse(output)"]).mapped


def test_cost_and_latency_need_a_threshold_and_ignore_transforms() -> None:
    assert mapped({"type": "cost"}).kind == "no threshold"
    assert mapped({"type": "latency", "threshold": 900}, transforms=["output.text"]).mapped


def test_the_check_key_is_the_metric_else_the_type() -> None:
    assert mapped({"type": "contains", "value": "x", "metric": "Names City"}).key == "names_city"
    assert mapped({"type": "llm-rubric", "value": "x"}).key == "llm_rubric"


# promptfoo's trace assertions as spans checks: the spans graded, with the verdict promptfoo
# gives them (its own examples' values: examples/opentelemetry-tracing-python).
def trace_of(*spans: tuple[str, float, str]) -> list[dict[str, object]]:
    """Spans named, each with its duration in ms and its status, one after the other."""
    return [
        {"trace_id": "a" * 32, "span_id": f"{i + 1:016x}", "name": name, "status": status,
         "start_ns": i * 10**9, "end_ns": i * 10**9 + int(took * 1e6)}
        for i, (name, took, status) in enumerate(spans)
    ]  # fmt: skip


def spans_verdict(result: Mapped, spans: list[dict[str, object]]) -> str:
    check = check_of(result)
    return check.grade(check.measured(TrialFacts("x", {}, spans=spans))).status.value  # type: ignore[arg-type]


RAG = trace_of(
    ("rag_agent_workflow", 900, "ok"),
    ("retrieve_document_1", 120, "ok"),
    ("retrieve_document_2", 80, "ok"),
    ("retrieve_document_3", 610, "ok"),
    ("reasoning_1", 5, "unset"),
    ("llm_generation", 300, "ok"),
)


def test_trace_span_count_is_a_spans_check_with_a_count() -> None:
    result = mapped({"type": "trace-span-count", "value": {"pattern": "retrieve_document_*",
                                                           "min": 3, "max": 3}})  # fmt: skip
    assert result.mapped and result.line == "trace-span-count -> spans"
    assert result.check == {
        "mode": "spans",
        "must_have": [{"name": "retrieve_document_*", "count": {"min": 3, "max": 3}}],
    }
    assert spans_verdict(result, RAG) == "pass"
    assert spans_verdict(result, RAG[:3]) == "fail"  # two retrievals
    at_least = mapped({"type": "trace-span-count", "value": {"pattern": "reasoning_*", "min": 3}})
    assert at_least.check["must_have"] == [{"name": "reasoning_*", "count": {"min": 3}}]
    assert spans_verdict(at_least, RAG) == "fail"
    assert spans_verdict(at_least, []) == "not_judged"  # no spans at all: incomplete


def test_trace_span_duration_is_a_longest_duration_per_span_or_a_percentile() -> None:
    result = mapped({"type": "trace-span-duration",
                     "value": {"pattern": "retrieve_document_*", "max": 500}})  # fmt: skip
    assert result.check == {
        "mode": "spans",
        "must_have": [{"name": "retrieve_document_*", "count": {"min": 0}, "max_duration_ms": 500}],
    }
    assert spans_verdict(result, RAG) == "fail"  # retrieve_document_3 took 610 ms
    assert spans_verdict(result, RAG[:3]) == "pass"
    assert spans_verdict(result, trace_of(("other", 9000, "ok"))) == "pass"  # none matches
    p95 = mapped({"type": "trace-span-duration",
                  "value": {"pattern": "*", "max": 700, "percentile": 80}})  # fmt: skip
    assert p95.check["must_have"][0]["percentile"] == 80  # type: ignore[index]
    assert spans_verdict(p95, RAG) == "pass"  # the 80th percentile of 6 is 610 ms
    assert spans_verdict(p95, [*RAG, *trace_of(("slow", 800, "ok"), ("slower", 900, "ok"))]) == (
        "fail"
    )


def test_trace_error_spans_is_max_errors() -> None:
    failing = [*RAG, *trace_of(("llm_retry", 10, "error"))]
    for value, check in [
        ({"max_count": 0}, {"mode": "spans", "max_errors": 0}),
        (0, {"mode": "spans", "max_errors": 0}),
        ({"max_count": 1, "pattern": "llm_*"}, {"mode": "spans", "max_errors": {"llm_*": 1}}),
    ]:
        result = mapped({"type": "trace-error-spans", "value": value})
        assert result.check == check
        assert spans_verdict(result, RAG) == "pass"
    assert spans_verdict(mapped({"type": "trace-error-spans", "value": 0}), failing) == "fail"
    share = mapped({"type": "trace-error-spans", "value": {"max_percentage": 10}})
    assert not share.mapped and share.kind == "error share"
    negated = mapped({"type": "not-trace-span-count", "value": {"pattern": "*", "max": 1}})
    assert not negated.mapped and negated.kind == "negated trace assertion"
    empty = mapped({"type": "trace-span-duration", "value": {"pattern": "*"}})
    assert not empty.mapped and "needs `max`" in str(empty.check["reason"])
