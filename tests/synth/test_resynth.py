"""Structure-preserving re-synthesis of ac-conflict-001 into a course-publishing card,
against a recorded model answer.

The default request carries structure only: the tests read what went on the wire and check
it against the original with the same overlap check the variant faces. Every verification
of the course variant passes and the holistic miss reproduces; bad variants, payloads that
would leak, unsupported goal states and substituted text to an unlisted endpoint all stay
out, with the failed check named and the original never printed."""

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
from caseforge.privacy.overlap import Original, fields_of
from caseforge.privacy.private import PrivateStore
from caseforge.privacy.verify import content_fields
from caseforge.synth.resynth import resynth
from tests.llm.wire import completion

CLARIFIER = Path(__file__).resolve().parents[2] / "examples" / "ac-clarifier"
URL = "http://llm.test/v1/chat/completions"
GLOSSARY = "person: [林佩萱, 小美, 阿哲]\norganization: [木棉市集]\n"
# Values of the original's goal state and text that must never go on the wire.
ORIGINAL_VALUES = [
    "林佩萱",
    "木棉市集",
    "NT$150",
    "1,200",
    "優惠碼",
    "折抵金額",
    "結帳頁效能",
    "POS",
]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "ac-clarifier"
    shutil.copytree(CLARIFIER, root, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    (root / "cases" / "ac-conflict-001-course.yaml").unlink()  # the variant is what we make
    return root


@pytest.fixture
def private(tmp_path: Path, suite: Path) -> PrivateStore:
    store = PrivateStore.for_suite(suite, "ac-clarifier", tmp_path / "private")
    store.write("glossaries/ac-conflict-001.yaml", GLOSSARY)
    return store


def course_answer(**changes: Any) -> dict[str, Any]:
    course = YAML(typ="safe").load(
        (CLARIFIER / "cases" / "ac-conflict-001-course.yaml").read_text()
    )
    answer = {
        "input": {"card": course["input"]["card"]},
        "items": 12,
        "mapping": {"3": 8, "4": 3, "7": 11},
        "values": {
            "scope_in": course["expect"]["scope_in"]["values"],
            "scope_out": course["expect"]["scope_out"]["values"],
            "goal": course["expect"]["goal"]["values"],
        },
        "tags": ["course", "e-learning"],
    }
    answer.update(changes)
    return answer


def client() -> ModelClient:
    return ModelClient(model="gpt-4.1-mini", api_key="sk-test", base_url="http://llm.test/v1")


def run(
    suite: Path,
    private: PrivateStore,
    answer: dict[str, Any] | None,
    reproduce: str | None = "holistic",
    **kwargs: Any,
) -> tuple[Any, list[dict[str, Any]]]:
    with respx.mock:
        route = respx.post(URL).mock(
            return_value=httpx.Response(
                200, json=completion(json.dumps(answer or {}, ensure_ascii=False))
            )
        )
        result = asyncio.run(
            resynth(suite, "ac-conflict-001", "課程上架", client(), private, reproduce, 3, **kwargs)
        )
        requests = [json.loads(call.request.content) for call in route.calls]
    return result, requests


def original_of(suite: Path) -> Original:
    data = YAML(typ="safe").load((suite / "cases" / "ac-conflict-001.yaml").read_text())
    terms = [("person", n) for n in ("林佩萱", "小美", "阿哲")] + [("organization", "木棉市集")]
    return Original(list(content_fields(json.loads(json.dumps(data, default=str)))), terms)


def test_the_course_variant_passes_every_check_and_reproduces_the_miss(
    suite: Path, private: PrivateStore
) -> None:
    result, requests = run(
        suite, private, course_answer(), new_id="resynth-course-001", reviewer="ana"
    )
    assert len(requests) == 1
    wire = json.dumps(requests[0], ensure_ascii=False)
    for value in ORIGINAL_VALUES:
        assert value not in wire
    # The request shares nothing with the original, by the same check the variant faces.
    contents = [(f"m{i}", m["content"]) for i, m in enumerate(requests[0]["messages"])]
    assert original_of(suite).findings(contents) == []
    prompt = requests[0]["messages"][1]["content"]
    assert "source item 3 of 7 carries conflict" in prompt and "mismatch" in prompt
    assert "write 11" in prompt and "Target domain: 課程上架" in prompt
    assert result.passed, [c.__dict__ for c in result.failed()]
    names = [c.name for c in result.checks]
    assert names == ["payload", "structure", "form", "overlap", "redaction", "reproduction"]
    assert result.reproduction["original_miss"] == ["3:mismatch"]
    assert result.reproduction["variant_miss_expected"] == ["8:mismatch"]
    assert result.reproduction["variant_trials_with_the_same_miss"] >= 2
    case = {c.case.id: c.case for c in load_suite(suite).cases}["resynth-course-001"]
    assert set(case.expect["ac_flags"].values) == {  # type: ignore[union-attr]
        "8:conflict",
        "8:mismatch",
        "3:unverifiable",
        "11:unverifiable",
    }
    assert "must-pass" not in case.tags and "coupon" not in case.tags
    provenance = case.provenance
    assert provenance["identifier_classes_replaced"] and provenance["reviewed_by"] == "ana"
    assert provenance["verification"]["overlap"]["passed"] is True
    assert provenance["sent"] == "structure"
    text = (suite / "cases" / "resynth-course-001.yaml").read_text()
    assert "ac-conflict-001" not in text  # the provenance never names or hashes the original
    mapping = private.mappings()[0]
    assert mapping["source_case"] == "ac-conflict-001"
    assert "林佩萱" in mapping["originals"]["person"]
    payloads = list((private.root / "payloads").glob("*.json"))
    assert len(payloads) == 1
    kept = json.loads(payloads[0].read_text())
    assert kept["messages"] == requests[0]["messages"] and kept["blocked"] == []


def test_a_dry_run_prints_the_payload_and_sends_nothing(suite: Path, private: PrivateStore) -> None:
    result, requests = run(suite, private, None, dry_run=True)
    assert requests == [] and not result.sent
    assert result.passed and [c.name for c in result.checks] == ["payload"]
    assert result.payload is not None and "source item 3 of 7" in result.payload.render()
    assert result.payload_path is not None and result.payload_path.is_file()
    assert not (suite / "cases" / "resynth-001.yaml").exists()


def test_a_shape_that_copies_the_original_blocks_the_send(
    suite: Path, private: PrivateStore
) -> None:
    private.write(
        "shapes/ac-conflict-001.txt",
        "AC3 說優惠碼沒有使用次數上限，跟 AC2 衝突；整張卡一起看的人會漏掉它跟描述矛盾。",
    )
    result, requests = run(suite, private, course_answer())
    assert requests == [] and not result.passed
    payload = next(c for c in result.checks if c.name == "payload")
    assert not payload.passed and "payload.messages[1]: shares a run of text" in payload.detail
    assert "優惠碼" not in payload.detail  # the reason never prints the original
    kept = json.loads(next((private.root / "payloads").glob("*.json")).read_text())
    assert kept["blocked"] and kept["dry_run"] is False


def test_the_written_shape_is_what_goes_out(suite: Path, private: PrivateStore) -> None:
    shape = "A reviewer reading the whole card keeps one flag on the double-flagged item."
    private.write("shapes/ac-conflict-001.txt", shape + "\n")
    result, requests = run(suite, private, course_answer(), new_id="resynth-course-003")
    assert result.passed
    assert shape in requests[0]["messages"][1]["content"]


@pytest.mark.parametrize(
    ("change", "failed", "reason"),
    [
        ({"mapping": {"3": 8, "4": 3, "7": 8}}, "structure", "multi-flagged"),
        ({"text_suffix": "\n聯絡人：林 佩萱"}, "overlap", "input.card: shares"),
        ({"text_suffix": "\n聯絡人：Lin Pei-Hsuan"}, "overlap", "spelled in Latin letters"),
        # a copied passage (30 Han characters); a short run of ordinary words would pass
        (
            {"text_suffix": "\n去年那批折價券被貼到比價論壇，一週內同一批帳號重複折抵了好幾百單"},
            "overlap",
            "a run of text",
        ),
        ({"text_suffix": "\n預算一百五十元"}, "overlap", "a number"),
        ({"text_suffix": "\n上線日：民國115年11月5日"}, "overlap", "a calendar date"),
        ({"text_suffix": "\n客戶名稱：█████"}, "redaction", "shade"),
        ({"text_suffix": "\n聯絡人：王○明"}, "redaction", "dot mask"),
        ({"tags": ["木棉市集"]}, "overlap", "class organization"),
    ],
)
def test_bad_variants_stay_out_and_say_why(
    suite: Path, private: PrivateStore, change: dict[str, Any], failed: str, reason: str
) -> None:
    answer = course_answer()
    suffix = change.pop("text_suffix", "")
    answer.update(change)
    answer["input"]["card"] += suffix
    before = sorted(p.name for p in (suite / "cases").iterdir())
    result, _ = run(suite, private, answer)
    assert not result.passed
    bad = {c.name: c.detail for c in result.failed()}
    assert failed in bad and reason in bad[failed], bad
    for value in ("林佩萱", "木棉市集", "150"):
        assert value not in bad[failed]
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


def test_refuses_a_goal_state_without_a_contract(suite: Path, private: PrivateStore) -> None:
    path = suite / "cases" / "ac-conflict-001.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("expect:\n", "expect:\n  discount: {mode: number, value: 150}\n", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CaseforgeError, match=r"expect\.discount \(number\) has no structure"):
        asyncio.run(resynth(suite, "ac-conflict-001", "課程上架", client(), private, "holistic"))


def test_validate_warns_until_a_person_has_re_read_the_variant(
    suite: Path, private: PrivateStore
) -> None:
    from caseforge.case.validate import validate_suite

    result, _ = run(suite, private, course_answer(), new_id="resynth-course-002")
    assert result.passed
    warnings = [w for w in validate_suite(suite).warnings if w.case_id == "resynth-course-002"]
    assert [w.field for w in warnings] == ["provenance.reviewed_by"]


def test_identifiers_in_other_fields_reach_neither_the_model_nor_the_variant(
    suite: Path, private: PrivateStore
) -> None:
    path = suite / "cases" / "ac-conflict-001.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "input:\n", "input:\n  reporter: 林佩萱 <lin.peixuan@mumian-market.tw>\n", 1
    )
    path.write_text(text, encoding="utf-8")
    answer = course_answer()
    answer["input"]["reporter"] = "周承翰 <zhou@course.example>"
    result, requests = run(suite, private, answer, new_id="resynth-course-004")
    wire = json.dumps(requests[0], ensure_ascii=False)
    assert "mumian" not in wire and "reporter: an e-mail" not in wire
    assert '"reporter"' in wire  # the field is named, its value is not sent
    assert result.passed, [c.__dict__ for c in result.failed()]
    leaky = course_answer()
    leaky["input"]["reporter"] = "Ann <lin.peixuan@mumian-market.tw>"
    result, _ = run(suite, private, leaky)
    overlap = next(c for c in result.checks if c.name == "overlap")
    assert not overlap.passed and "input.reporter" in overlap.detail


def test_substituted_text_goes_only_to_an_allow_listed_endpoint(
    suite: Path, tmp_path: Path
) -> None:
    config = suite / "caseforge.yaml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + "privacy: {send: substituted, allowed_endpoints: ['http://llm.internal:8080']}\n",
        encoding="utf-8",
    )
    private = PrivateStore.for_suite(suite, "ac-clarifier", tmp_path / "private")
    private.write("glossaries/ac-conflict-001.yaml", GLOSSARY)
    private.write("secret.key", "ab" * 32 + "\n")  # the same surrogates on every run
    with pytest.raises(CaseforgeError, match=r"not in privacy\.allowed_endpoints"):
        run(suite, private, course_answer())
    config.write_text(
        config.read_text(encoding="utf-8").replace("llm.internal:8080", "llm.test:80"),
        encoding="utf-8",
    )
    result, requests = run(suite, private, course_answer(), None, new_id="resynth-course-005")
    prompt = requests[0]["messages"][1]["content"]
    assert "identifier replaced by a surrogate" in prompt
    assert "林佩萱" not in prompt and "木棉市集" not in prompt and "NT$150" not in prompt
    assert result.passed, [c.__dict__ for c in result.failed()]
    assert private.mappings()[-1]["replacements"]["林佩萱"]


def test_fields_of_walks_every_leaf() -> None:
    leaves = dict(fields_of({"a": {"b": [1, "x"], "c": None, "d": True}, "e": "y"}))
    assert leaves == {"a.b[0]": "1", "a.b[1]": "x", "e": "y"}


CORPUS = Path(__file__).parents[1] / "privacy" / "corpus"


def test_no_planted_identifier_of_the_corpus_reaches_the_request(
    suite: Path, tmp_path: Path
) -> None:
    """Each sensitive ticket of the corpus as a flagged case, its identifiers also in the goal
    state: the default request carries none of the 320, in any form the overlap check knows."""
    tickets = YAML(typ="safe", pure=True).load((CORPUS / "sensitive.yaml").read_text("utf-8"))
    private = PrivateStore.for_suite(suite, "ac-clarifier", tmp_path / "corpus-private")
    leaked: list[tuple[str, str]] = []
    for ticket in tickets:
        identifiers = [str(v) for _, v in ticket["identifiers"]]
        case = {
            "id": f"sens-{ticket['id']}",
            "input": {"card": ticket["text"], "reporter": identifiers[0]},
            "expect": {
                "ac_flags": {
                    "mode": "exact_set",
                    "values": ["2:conflict", "2:mismatch", "3:unverifiable"],
                },
                "scope_in": {"mode": "must_include", "values": identifiers[1:3]},
                "goal": {"mode": "judge", "values": [identifiers[-1] + " 必須處理"]},
            },
            "tags": ["sensitive", identifiers[3]],
        }
        private.write(f"cases/{case['id']}.yaml", json.dumps(case, ensure_ascii=False))
        private.write(
            f"glossaries/{case['id']}.yaml",
            json.dumps(ticket.get("glossary") or {}, ensure_ascii=False),
        )
        result = asyncio.run(
            resynth(suite, case["id"], "課程上架", None, private, None, dry_run=True)
        )
        assert result.passed, (ticket["id"], result.checks[0].detail)
        wire = json.dumps(result.payload.to_json(), ensure_ascii=False)
        leaked += [(ticket["id"], v) for v in identifiers if v in wire]
    assert leaked == []


def test_the_cli_dry_run_needs_no_model_and_prints_the_request(suite: Path, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI")}
    env["CASEFORGE_PRIVATE"] = str(tmp_path / "cli-private")
    args = [sys.executable, "-m", "caseforge", "resynth", str(suite), "ac-conflict-001"]
    result = subprocess.run(
        [*args, "--domain", "課程上架", "--dry-run"], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout[: result.stdout.index("\nprivate store: ")])
    assert printed["mode"] == "structure" and printed["endpoint"] is None
    assert "source item 3 of 7" in printed["messages"][1]["content"]
    assert "dry run: nothing was sent" in result.stdout
    assert not any(v in result.stdout for v in ORIGINAL_VALUES)
    sent = subprocess.run([*args, "--domain", "課程上架"], capture_output=True, text=True, env=env)
    assert sent.returncode == 5 and "resynth needs a model" in sent.stderr
    assert "Traceback" not in sent.stderr


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("4:unverifiable", "9:unverifiable"), r"a flag on item 9, but card has items 1 to 7"),
        (("4:unverifiable", "4:weird"), r"flag kind 'weird' has no meaning.*privacy\.flag_kinds"),
        (("mode: exact_set", "mode: must_include"), r"expect\.ac_flags is must_include"),
        (('"3:conflict"', '"AC3:conflict"'), r"write flags as <n>:<kind>"),
    ],
)
def test_a_goal_state_it_cannot_keep_is_refused_with_the_reason(
    suite: Path, private: PrivateStore, edit: tuple[str, str], message: str
) -> None:
    path = suite / "cases" / "ac-conflict-001.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(*edit), encoding="utf-8")
    with pytest.raises(CaseforgeError, match=message):
        asyncio.run(resynth(suite, "ac-conflict-001", "課程", None, private, None, dry_run=True))


def test_a_stated_miss_must_be_one_of_the_flags(suite: Path, private: PrivateStore) -> None:
    with pytest.raises(CaseforgeError, match=r"--miss mismatch: not one of the case's flags"):
        asyncio.run(
            resynth(
                suite,
                "ac-conflict-001",
                "課程",
                None,
                private,
                None,
                dry_run=True,
                original_miss=["mismatch"],
            )
        )


def test_the_fixtures_and_the_flag_meanings_are_checked_before_a_send(
    suite: Path, private: PrivateStore
) -> None:
    (suite / "fixtures").mkdir(exist_ok=True)
    (suite / "fixtures" / "ac-conflict-001.json").write_text(
        json.dumps({"total": "NT$86,420", "placed": "2026-09-17"}), encoding="utf-8"
    )
    private.write("shapes/ac-conflict-001.txt", "the order of 86,420 placed on 17 September")
    result, requests = run(suite, private, course_answer())
    assert requests == [] and "payload.shape: shares a number" in result.checks[0].detail
    private.write("shapes/ac-conflict-001.txt", "a reviewer misses a second flag")
    config = suite / "caseforge.yaml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + "privacy: {flag_kinds: {conflict: 去年那批折價券被貼到比價論壇}}\n",
        encoding="utf-8",
    )
    result, requests = run(suite, private, course_answer())
    assert requests == [] and "payload.flag_kinds.conflict: shares a run" in result.checks[0].detail


def test_a_bad_allowed_endpoint_is_a_config_error(suite: Path) -> None:
    from caseforge.case.load import load_config

    config = suite / "caseforge.yaml"
    config.write_text(
        config.read_text(encoding="utf-8")
        + "privacy: {send: substituted, allowed_endpoints: ['http://localhost:80000']}\n",
        encoding="utf-8",
    )
    with pytest.raises(CaseforgeError, match="Port out of range"):
        load_config(suite)
