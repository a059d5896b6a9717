"""``caseforge import promptfoo``: a promptfoo config (``promptfooconfig.yaml``) as a suite.

- **Providers** become the suite's configurations (``configs:`` in ``caseforge.yaml``), one
  per provider: ``provider`` (promptfoo's id), ``model`` (the model it names), ``options``
  (its ``config``, secrets left out), ``prompt`` (the template). The agent is a stub,
  ``promptfoo_agent.py`` (``interop/promptfoo_agent.py``), that calls the configuration's
  model through ``ctx.llm()`` and says what to fill in; it is written into a new suite only,
  and never rewritten.
- **Prompts.** One prompt is rendered with each test's vars into ``input.prompt``
  (``{{var}}`` only: ``interop/nunjucks.py``). Several: each configuration is a provider ×
  prompt, with its template under ``prompt``, and the agent renders it (the input holds the
  vars): the report says so.
- **Tests** (``interop/promptfoo_tests.py``), each merged with ``defaultTest`` and made a
  case (``interop/promptfoo_cases.py``), its assertions mapped to checks
  (``interop/promptfoo_asserts.py``). A config without tests runs its prompts once, as
  promptfoo does: one case from ``defaultTest``.
- **The report** (``IMPORT.md``) says, per test and assertion, what it became or why it was
  not imported, and once what holds for every test. :class:`PromptfooReport` also keeps
  each assertion's outcome and the count of each kind of reason, for tests and
  ``benchmarks/promptfoo_examples.py``.
- ``evaluateOptions.repeat`` becomes the suite's ``trials``.
- ``tracing:`` (promptfoo's OTLP receiver) is not imported: the report says that caseforge
  receives the agent's spans with ``caseforge run --otlp-listen HOST:PORT``.

Ids: the test's description, else its vars, slugified and deduplicated (``--prefix`` before
each); the description is kept in ``provenance.description`` and, when no other test has
it, is the id a re-import finds the case by (else its place: ``test 3``,
``tests.csv line 4``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from caseforge.case.load import load_config
from caseforge.errors import CaseforgeError, DatasetError
from caseforge.interop import promptfoo_agent
from caseforge.interop.ids import join, slugify
from caseforge.interop.promptfoo_asserts import JUDGE_NOTE, TRACE_NOTE, TRACE_TYPES, judged
from caseforge.interop.promptfoo_cases import Outcome, Setting, build, check_shape, merged
from caseforge.interop.promptfoo_config import (
    Prompt,
    Provider,
    config_file,
    failure,
    file_ref,
    load_file,
    read_prompts,
    read_providers,
    read_text,
)
from caseforge.interop.promptfoo_tests import SkippedSource, SourceTest, read_tests
from caseforge.interop.report import ImportReport
from caseforge.interop.suite import SuiteWriter, source_name

FORMAT = "promptfoo"
AGENT_FILE = "promptfoo_agent.py"
AGENT = "promptfoo_agent:run"
# Config keys read here; the others are named in the report.
_READ = {
    "description",
    "prompts",
    "providers",
    "targets",
    "tests",
    "defaultTest",
    "evaluateOptions",
}
_QUIET = {"outputPath", "sharing", "writeLatestResults", "tags", "env", "commandLineOptions"}
_NOT_IMPORTED = (
    (
        "redteam",
        "redteam",
        "promptfoo generates these tests (promptfoo redteam generate); "
        "generate them, then import the generated config",
    ),
    (
        "scenarios",
        "scenarios",
        "promptfoo crosses each scenario's configs with its tests; "
        "not imported: write them out as tests",
    ),
    ("extensions", "extensions", "hooks promptfoo runs around the eval; not run"),
    (
        "derivedMetrics",
        "derived metrics",
        "metrics computed from named scores; caseforge's summary has its own",
    ),
    (
        "nunjucksFilters",
        "nunjucks filters",
        "custom template filters; templates that use them are not rendered",
    ),
)


@dataclass(frozen=True)
class PromptfooImport:
    """What ``caseforge import promptfoo`` was asked for."""

    config: Path
    suite: Path
    prefix: str | None = None  # before each case id; default: none


@dataclass
class PromptfooReport(ImportReport):
    """The import report, with each assertion's outcome and how often each kind of reason
    was reported (a skipped source, an assertion not mapped, a test's threshold…)."""

    assertions: list[Outcome] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)

    empty: bool = False  # no test became a case: nothing is written

    def error(self) -> DatasetError | None:
        """The import's error: no case at all, or a case that does not validate."""
        if self.empty:
            return DatasetError(
                f"{self.source}: no test became a case (see the report above); nothing written"
            )
        return super().error()

    def reported(self, kind: str, text: str) -> None:
        """A note for every item, counted under ``kind``."""
        self.notes.append(text)
        self.reasons[kind] += 1


def import_promptfoo(request: PromptfooImport, dry_run: bool = False) -> PromptfooReport:
    """Read the config, write the suite (unless ``dry_run``), return the report.

    Raises:
        UsageError: no config there, or one written as code.
        DatasetError: a file promptfoo would not read either (file, line and field named),
            or an imported case that does not validate.
    """
    path = config_file(request.config)
    base = path.parent
    data = load_file(path)
    if not isinstance(data, dict):
        raise failure(path, [], "a promptfoo config is a mapping (prompts, providers, tests…)")
    report = PromptfooReport(FORMAT, str(path), str(request.suite))
    prompts = read_prompts(data.get("prompts"), base, path)
    providers, problems = read_providers(data.get("providers", data.get("targets")), base, path)
    for problem in problems:
        report.reported("provider", f"{problem}: not a configuration")
    default = _default_test(data.get("defaultTest"), base, path)
    setting = Setting(prompts[0] if len(prompts) == 1 else None, base)
    files = setting.files
    writer = SuiteWriter(
        request.suite,
        FORMAT,
        source_name(path, request.suite),
        report,
        config=_suite_config(data, path, providers, prompts),
        files=files,
        derived=frozenset({"prompt"}),  # rendered from the vars: a new template is no new test
    )
    if not (request.suite / AGENT_FILE).exists():
        files[AGENT_FILE] = read_text(Path(promptfoo_agent.__file__))
    _config_notes(report, data, providers, prompts, writer.existing)
    setting.judge = writer.existing and _has_judge(request.suite)
    entries = read_tests(data.get("tests"), base, path)
    if not entries and data.get("tests") is None and "scenarios" not in data:
        entries = [SourceTest("the prompts alone (no tests)", {}, path, ["defaultTest"])]
        report.reported(
            "no tests",
            "no tests: promptfoo runs each prompt once with "
            "defaultTest; so does the one case made of it",
        )
    descriptions = Counter(
        str(e.test.get("description"))
        for e in entries
        if isinstance(e, SourceTest) and e.test.get("description")
    )
    prefix = slugify(request.prefix, "") if request.prefix else ""
    names: set[str] = set()
    for entry in entries:
        if isinstance(entry, SkippedSource):
            report.item(entry.where).skip(entry.reason)
            report.reasons[entry.kind] += 1
            continue
        check_shape(entry, default)
        test = merged(entry.test, default)
        description = entry.test.get("description")
        unique = isinstance(description, str) and descriptions[description] == 1
        for built in build(entry, test, setting):
            original = description if unique else None
            if original is not None and built.where != entry.where:
                original = f"{description} {built.where.removeprefix(entry.where).strip()}"
            item = report.item(built.where, original)
            for line in built.mapped:
                item.map(line)
            for kind, note in built.notes:
                item.note(note)
                if kind:
                    report.reasons[kind] += 1
            report.assertions += built.outcomes
            names.update(str(k) for k in _inputs(built.case) if k != "prompt")
            writer.add(item, join(prefix, built.slug) or "test", built.case, original)
    if any(o.mapped and judged(o.type) for o in report.assertions):
        report.notes.append(JUDGE_NOTE)
    if any(o.mapped and o.type in TRACE_TYPES for o in report.assertions):
        report.notes.append(TRACE_NOTE)
    if names:  # the rendered prompts repeat the template: near-duplicates are read in the vars
        writer.config["dedup"] = {"fields": sorted(names)}
    report.empty = all(item.case_id is None for item in report.items)
    writer.write(dry_run or report.empty)
    return report


def _inputs(case: dict[str, object]) -> dict[str, object]:
    values = case.get("input")
    return {str(k): v for k, v in values.items()} if isinstance(values, dict) else {}


def _has_judge(suite: Path) -> bool:
    try:
        return load_config(suite).judge is not None
    except CaseforgeError:
        return False


def _default_test(value: object, base: Path, path: Path) -> dict[str, object]:
    if value is None:
        return {}
    if isinstance(value, str) and value.startswith("file://"):
        ref = file_ref(value, base)
        if not ref.path.is_file():
            raise failure(path, ["defaultTest"], f"{value}: no such file")
        value = load_file(ref.path)
    if not isinstance(value, dict):
        raise failure(path, ["defaultTest"], "defaultTest is a mapping (vars, assert, options)")
    return value


def configurations(providers: list[Provider], prompts: list[Prompt]) -> dict[str, object]:
    """The suite's ``configs:``: one per provider, or per provider × prompt when several
    prompts (a provider's ``prompts:`` list keeps only the prompts it names)."""
    several = len(prompts) > 1
    configs: dict[str, object] = {}
    for provider in providers or [Provider("")]:
        values: dict[str, object] = {}
        if provider.id:
            values["provider"] = provider.id
        if provider.label:
            values["label"] = provider.label
        if provider.model:
            values["model"] = provider.model
        if provider.options:
            values["options"] = provider.options
        name = slugify(provider.label or provider.id, "default")
        chosen = [
            (n, p)
            for n, p in enumerate(prompts, 1)
            if provider.prompts is None or p.label in provider.prompts
        ]
        for number, prompt in chosen if several else chosen[:1]:
            one = dict(values)
            if prompt.template is not None:
                one["prompt"] = prompt.template
            if prompt.label != prompt.template:
                one["prompt_label"] = prompt.label
            named = prompt.label != prompt.template and not prompt.label.startswith("file://")
            short = slugify(prompt.label, "")[:24].strip("-") if named else ""
            key = join(name, short or f"p{number}") if several else name
            configs[_free(key, configs)] = one
        if not chosen and values:
            configs[_free(name, configs)] = values
    return configs


def _free(name: str, taken: dict[str, object]) -> str:
    candidate, number = name, 1
    while candidate in taken:
        number += 1
        candidate = f"{name}-{number}"
    return candidate


def _suite_config(
    data: dict[str, object], path: Path, providers: list[Provider], prompts: list[Prompt]
) -> dict[str, object]:
    described = data.get("description")
    config: dict[str, object] = {
        "description": described
        if isinstance(described, str) and described.strip()
        else f"Imported from the promptfoo config {path.name}.",
        "agent": {"callable": AGENT},
    }
    configs = configurations(providers, prompts)
    if configs:
        config["configs"] = configs
    options = data.get("evaluateOptions")
    repeat = options.get("repeat") if isinstance(options, dict) else None
    if isinstance(repeat, int) and not isinstance(repeat, bool) and 1 <= repeat <= 10_000:
        config["trials"] = repeat
    return config


def _config_notes(
    report: PromptfooReport,
    data: dict[str, object],
    providers: list[Provider],
    prompts: list[Prompt],
    existing: bool,
) -> None:
    names = ", ".join(str(k) for k in configurations(providers, prompts))
    if providers:
        report.notes.append(
            f"providers: {len(providers)} -> configurations {names} (provider, model, options, "
            f"prompt); the agent stub {AGENT_FILE} sends the prompt to the configuration's "
            "model through ctx.llm() (an OpenAI-compatible endpoint): fill it in for the rest"
        )
    else:
        report.reported(
            "no providers",
            f"no providers: write the agent in {AGENT_FILE} (the configurations hold the prompts)",
        )
    custom = [p.id for p in providers if p.custom]
    if custom:
        report.reported(
            "custom provider",
            f"providers of your own ({', '.join(custom)}): "
            f"promptfoo called them; call them from {AGENT_FILE}",
        )
    secrets = sorted({k for p in providers for k in p.dropped})
    if secrets:
        report.notes.append(f"provider config keys left out (secrets): {', '.join(secrets)}")
    if existing:
        report.notes.append(
            "an existing suite: its caseforge.yaml is not changed; it needs agent: {callable: "
            f"{AGENT}}} and these configurations: {names or 'none'}"
        )
    _prompt_notes(report, prompts)
    for key, kind, why in _NOT_IMPORTED:
        if data.get(key):
            report.reported(kind, f"{key}: {why}")
    if "tracing" in data:
        report.reported("tracing", _tracing_note(data["tracing"]))
    known = _READ | _QUIET | {key for key, _, _ in _NOT_IMPORTED} | {"tracing"}
    rest = sorted(str(k) for k in data if k not in known)
    if rest:
        report.reported("config keys", f"config keys not imported: {', '.join(rest)}")


def _tracing_note(value: object) -> str:
    """What becomes of promptfoo's ``tracing:`` settings: caseforge's run has a receiver of
    its own, given the address promptfoo's OTLP receiver had (``otlp.http``), if any."""
    otlp = value.get("otlp") if isinstance(value, dict) else None
    http = otlp.get("http") if isinstance(otlp, dict) else None
    host = http.get("host") if isinstance(http, dict) else None
    port = http.get("port") if isinstance(http, dict) else None
    given = isinstance(port, int) and not isinstance(port, bool) and 0 < port < 65536
    address = f"{host if isinstance(host, str) and host else '127.0.0.1'}:{port}" if given else ""
    here = f" ({address} as this config's receiver had it)" if address else ""
    return (
        "tracing: promptfoo's tracing settings are not imported; caseforge receives the "
        "agent's spans with `caseforge run --otlp-listen HOST:PORT`"
        f"{here}, where the agent exports OTLP/HTTP (see the tracing guide)"
    )


def _prompt_notes(report: PromptfooReport, prompts: list[Prompt]) -> None:
    unread = [p for p in prompts if p.template is None]
    for prompt in unread:
        report.reported("prompt not read", f"prompt {prompt.label}: {prompt.reason}")
    if len(prompts) == 1 and not unread:
        chat = " (chat messages, as their JSON text)" if prompts[0].chat else ""
        report.notes.append(
            f"prompt: rendered with each test's vars into input.prompt{chat}; the vars are the "
            "rest of the input"
        )
    elif len(prompts) > 1:
        report.reported(
            "several prompts",
            f"prompts: {len(prompts)} -> each configuration is a provider × prompt (its "
            "template under `prompt`); a case's input holds the test's vars and the agent "
            "renders the configuration's prompt, so code checks see context.prompt as null",
        )
    elif not prompts:
        report.reported(
            "no prompts",
            "no prompts: the input holds the test's vars; the agent builds what it sends",
        )
