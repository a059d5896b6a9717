"""Helpers shared by the test files: the CLI in a process of its own, a free TCP port, and a
small suite written from JSON. Fixtures stay in ``tests/conftest.py``; these are plain
functions, so modules that are not tests (``tests/postgres.py``) can use them too."""

from tests.helpers.net import free_port
from tests.helpers.process import REPO_ROOT, TIMEOUT_S, caseforge_process
from tests.helpers.suites import write_toy_suite

__all__ = ["REPO_ROOT", "TIMEOUT_S", "caseforge_process", "free_port", "write_toy_suite"]
