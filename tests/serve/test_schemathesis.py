"""The JSON API against its own OpenAPI spec, fuzzed by Schemathesis: whatever a client
sends within the spec, no endpoint answers 500, and every 200 matches its model. It runs on
a copy of the served data, since the fuzzer's POSTs (with the CSRF token) really write."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)

from caseforge.serve import Catalog, Guard, create_app  # noqa: E402
from caseforge.serve.security import CSRF_COOKIE  # noqa: E402
from tests.serve.conftest import Served  # noqa: E402

ORIGIN = "http://127.0.0.1:8471"


@pytest.fixture(scope="module")
def copied(world: Served, tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("fuzzed")
    store = tmp / "store.db"
    shutil.copy(world.store.removeprefix("sqlite:///"), store)
    suites = []
    for name, folder in world.suites.items():
        suites.append(shutil.copytree(folder, tmp / name))
    catalog = Catalog.open(suites, f"sqlite:///{store}", reviewer="fuzzer")
    # Schemathesis names an ASGI app `testserver`, which the Host guard would refuse.
    return create_app(catalog, Guard.for_host("127.0.0.1", allow_hosts=["testserver"]))


@pytest.fixture(scope="module")
def csrf(copied: Any) -> dict[str, str]:
    from fastapi.testclient import TestClient

    web = TestClient(copied, base_url=ORIGIN)
    token = web.get("/").cookies.get(CSRF_COOKIE) or ""
    return {"X-CSRF-Token": token, "Origin": ORIGIN, "Cookie": f"{CSRF_COOKIE}={token}"}


def _operations(app: Any) -> list[Any]:
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", app)
    return [result.ok() for result in schema.get_all_operations()]


def test_the_api_never_fails_and_answers_its_models(copied: Any, csrf: dict[str, str]) -> None:
    # Hypothesis directly, one operation after another: Schemathesis' own pytest plugin
    # does not work with pytest 9 (it reads a private attribute pytest removed).
    operations = _operations(copied)
    assert len(operations) >= 11  # every endpoint of the spec

    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=25,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def fuzz(case: Any) -> None:
            case.call_and_validate(
                headers=csrf,
                checks=[not_a_server_error, response_schema_conformance, content_type_conformance],
            )

        fuzz()
