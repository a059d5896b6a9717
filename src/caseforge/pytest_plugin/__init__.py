"""caseforge's pytest plugin: a suite's cases as pytest test items, one per case.

Installed with caseforge as the ``pytest11`` entry point ``caseforge``, so every pytest run
of everyone who installs caseforge loads this module: it imports pytest and nothing else,
adds its options, and does nothing more unless a suite is named, by ``--caseforge SUITE``
or by the ``caseforge_suite`` key of the pytest configuration (``pyproject.toml``'s
``[tool.pytest.ini_options]``, for a plain ``pytest`` or an IDE's test runner). Only then is
the plugin itself (``session.py``) imported, and caseforge with it.

``-p no:caseforge`` leaves it out altogether. docs/how-to/pytest.md is the guide.
"""

from __future__ import annotations

from pathlib import Path

import pytest

PASS_RULES = ("all", "majority", "any")  # --caseforge-pass: when a case's item passes


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("caseforge", "caseforge: a suite's cases as test items")
    group.addoption(
        "--caseforge",
        metavar="SUITE",
        dest="caseforge",
        default=None,
        help="Run the cases of the caseforge suite in SUITE as test items, one per case.",
    )
    group.addoption(
        "--caseforge-config",
        metavar="NAME",
        dest="caseforge_configs",
        action="append",
        default=[],
        help="The suite's configuration to run; repeat it for several (an item per case each).",
    )
    group.addoption(
        "--caseforge-trials",
        metavar="N",
        dest="caseforge_trials",
        type=int,
        default=None,
        help="Trials per case (default: the suite's).",
    )
    group.addoption(
        "--caseforge-pass",
        dest="caseforge_pass",
        choices=PASS_RULES,
        default="all",
        help="When a case passes: every trial passes (all, the default), most do (majority), "
        "or one does (any).",
    )
    group.addoption(
        "--caseforge-split",
        dest="caseforge_split",
        choices=("dev", "test", "all"),
        default="all",
        help="The cases of this split (default: all).",
    )
    group.addoption(
        "--caseforge-no-judge",
        dest="caseforge_no_judge",
        action="store_true",
        help="Skip judge checks on purpose, as `caseforge run --no-judge` does.",
    )
    group.addoption(
        "--caseforge-store",
        metavar="URL",
        dest="caseforge_store",
        default=None,
        help="The run store (default: CASEFORGE_STORE, else the suite's .caseforge/).",
    )
    parser.addini(
        "caseforge_suite",
        "The caseforge suite whose cases run as test items, relative to this file "
        "(as --caseforge SUITE does).",
        default=None,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "caseforge: a case of a caseforge suite (--caseforge)")
    suite = _suite(config)
    if suite is None:
        return
    from caseforge.pytest_plugin.session import CaseforgePlugin

    config.pluginmanager.register(CaseforgePlugin(config, suite), "caseforge-suite")


def _suite(config: pytest.Config) -> Path | None:
    """The suite named on the command line (from where pytest was started), else in the
    configuration file (from its folder); None: the plugin stays off."""
    given = config.getoption("caseforge")
    if given:
        return config.invocation_params.dir / str(given)
    written = config.getini("caseforge_suite")
    if written:
        base = config.inipath.parent if config.inipath is not None else config.rootpath
        return base / str(written)
    return None
