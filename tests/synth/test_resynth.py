"""Structure-preserving re-synthesis of ac-conflict-001 into a course-publishing card,
against a recorded model answer: every verification passes and the holistic miss
reproduces; a bad variant stays out of the suite with the failed check named."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
from ruamel.yaml import YAML

from caseforge.case.load import load_suite
from caseforge.errors import CaseforgeError
from caseforge.llm import ModelClient
from caseforge.synth.private import PrivateStore
from caseforge.synth.resynth import resynth
from tests.llm.wire import completion

CLARIFIER = Path(__file__).resolve().parents[2] / "examples" / "ac-clarifier"
URL = "http://llm.test/v1/chat/completions"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "ac-clarifier"
    shutil.copytree(CLARIFIER, root, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (root / "cases" / "ac-conflict-001-course.yaml").unlink()  # the variant is what we make
    return root


@pytest.fixture
def private(tmp_path: Path) -> PrivateStore:
    store = PrivateStore("ac-clarifier", tmp_path / "private")
    store.write(
        "glossaries/ac-conflict-001.yaml",
        "person: [林佩萱, 小美, 阿哲]\norganization: [木棉市集]\n",
    )
    return store


def course_answer(**changes: Any) -> dict[str, Any]:
    course = YAML(typ="safe").load(
        (CLARIFIER / "cases" / "ac-conflict-001-course.yaml").read_text()
    )
    answer = {
        "text": course["input"]["card"],
        "items": 12,
        "mapping": {"3": 8, "4": 3, "7": 11},
        "values": {
            "scope_in": course["expect"]["scope_in"]["values"],
            "scope_out": course["expect"]["scope_out"]["values"],
            "goal": course["expect"]["goal"]["values"],
        },
    }
    answer.update(changes)
    return answer


def client() -> ModelClient:
    return ModelClient(model="gpt-4.1-mini", api_key="sk-test", base_url="http://llm.test/v1")


def run(suite: Path, private: PrivateStore, answer: dict[str, Any], **kwargs: Any) -> Any:
    with respx.mock:
        route = respx.post(URL).mock(
            return_value=httpx.Response(
                200, json=completion(json.dumps(answer, ensure_ascii=False))
            )
        )
        result = asyncio.run(
            resynth(
                suite, "ac-conflict-001", "課程上架", client(), private, "holistic", 3, **kwargs
            )
        )
        request = json.loads(route.calls[0].request.content)
    return result, request


def test_the_course_variant_passes_every_check_and_reproduces_the_miss(
    suite: Path, private: PrivateStore
) -> None:
    result, request = run(
        suite, private, course_answer(), new_id="resynth-course-001", reviewer="ana"
    )
    prompt = request["messages"][1]["content"]
    # What the model saw: surrogates instead of the identifiers, and the contract.
    assert "林佩萱" not in prompt and "木棉市集" not in prompt and "NT$150" not in prompt
    assert "item 3 must BOTH conflict" in prompt and "not adjacent" in prompt
    assert result.passed, [c.__dict__ for c in result.failed()]
    names = [c.name for c in result.checks]
    assert names == ["structure", "leaks", "redaction", "reproduction"]
    assert result.reproduction["original_miss"] == ["3:mismatch"]
    assert result.reproduction["variant_miss_expected"] == ["8:mismatch"]
    assert result.reproduction["variant_trials_with_the_same_miss"] >= 2
    case = {c.case.id: c.case for c in load_suite(suite).cases}["resynth-course-001"]
    assert set(case.expect["ac_flags"].values) == {
        "8:conflict",
        "8:mismatch",
        "3:unverifiable",
        "11:unverifiable",
    }  # type: ignore[union-attr]
    provenance = case.provenance
    assert provenance["identifier_classes_replaced"] and provenance["reviewed_by"] == "ana"
    assert provenance["verification"]["leaks"]["passed"] is True
    text = (suite / "cases" / "resynth-course-001.yaml").read_text()
    assert "ac-conflict-001" not in text  # the provenance never names or hashes the original
    mapping = private.mappings()[0]
    assert mapping["source_case"] == "ac-conflict-001" and "林佩萱" in mapping["replacements"]


@pytest.mark.parametrize(
    ("change", "failed", "reason"),
    [
        ({"mapping": {"3": 8, "4": 3, "7": 8}}, "structure", "multi-flagged"),
        ({"text_suffix": "\n聯絡人：林 佩萱"}, "leaks", "other separators"),
        ({"text_suffix": "\n這次的碼務必設使用次數限制，不能再讓人鑽漏洞"}, "leaks", "CJK 8-gram"),
        ({"text_suffix": "\n客戶名稱：█████"}, "redaction", "redaction marks"),
    ],
)
def test_bad_variants_stay_out_and_say_why(
    suite: Path, private: PrivateStore, change: dict[str, Any], failed: str, reason: str
) -> None:
    answer = course_answer()
    suffix = change.pop("text_suffix", "")
    answer.update(change)
    answer["text"] += suffix
    before = sorted(p.name for p in (suite / "cases").iterdir())
    result, _ = run(suite, private, answer)
    assert not result.passed
    bad = {c.name: c.detail for c in result.failed()}
    assert failed in bad and reason in bad[failed]
    assert "reproduction" not in [c.name for c in result.checks]  # not reached
    assert sorted(p.name for p in (suite / "cases").iterdir()) == before
    assert list((private.root / "rejected").glob("*.json"))


def test_refuses_without_a_written_goal_state(suite: Path, private: PrivateStore) -> None:
    data = YAML(typ="safe").load((suite / "cases" / "ac-conflict-001.yaml").read_text())
    data["expect"]["ac_flags"] = {"mode": "ignore", "reason": "not written yet"}
    (suite / "cases" / "ac-conflict-001.yaml").write_text(
        json.dumps(data, ensure_ascii=False, default=str)
    )
    with pytest.raises(CaseforgeError, match="refuses to run before the goal state is written"):
        asyncio.run(resynth(suite, "ac-conflict-001", "課程上架", client(), private, "holistic"))


def test_validate_warns_until_a_person_has_re_read_the_variant(
    suite: Path, private: PrivateStore
) -> None:
    from caseforge.case.validate import validate_suite

    result, _ = run(suite, private, course_answer(), new_id="resynth-course-002")
    assert result.passed
    warnings = [w for w in validate_suite(suite).warnings if w.case_id == "resynth-course-002"]
    assert [w.field for w in warnings] == ["provenance.reviewed_by"]


def test_a_variant_leaking_a_short_sha_of_the_original_stays_out(
    suite: Path, private: PrivateStore
) -> None:
    path = suite / "cases" / "ac-conflict-001.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("先這樣～", "先這樣～ 上次的修正在 commit 3f9a2c1d4e5b 已合併。")
    path.write_text(text, encoding="utf-8")
    answer = course_answer()
    answer["text"] += "\n（延續 commit 3f9a2c1 的做法）"
    result, request = run(suite, private, answer)
    assert "3f9a2c1d4e5b" not in request["messages"][1]["content"]  # the model saw a surrogate
    assert not result.passed
    leaks = next(c for c in result.checks if c.name == "leaks")
    assert not leaks.passed and "7+ characters of commit '3f9a2c1d4e5b'" in leaks.detail


def test_identifiers_in_other_fields_and_tags_keep_the_variant_out(
    suite: Path, private: PrivateStore
) -> None:
    path = suite / "cases" / "ac-conflict-001.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "input:\n", "input:\n  reporter: 林佩萱 <lin.peixuan@mumian-market.tw>\n", 1
    )
    text = text.replace("tags: [coupon,", "tags: [木棉市集, coupon,")
    path.write_text(text, encoding="utf-8")
    result, _ = run(suite, private, course_answer())
    assert not result.passed
    leaks = next(c for c in result.checks if c.name == "leaks")
    assert "林佩萱" in leaks.detail and "木棉市集" in leaks.detail
