"""The reference pages of the docs site, generated from the code so they cannot drift.

Each function returns Markdown: every command and option of the CLI (from the typer app),
every ``caseforge.yaml`` key with its type, default and meaning (from :class:`SuiteConfig`
and its sub-models), the check modes (from the mode table), the exit codes (from
``errors.py``), and the fields of the case file, the report and the agent protocol (from
their pydantic models). ``docs/hooks/generate.py`` puts each where a page says
``<!-- generated: NAME -->``; ``caseforge schema --config`` prints the config's JSON Schema.
"""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from caseforge.errors import EXIT_CODES


def cli_reference() -> str:
    """Every command, its arguments and options, and their help."""
    import typer.core

    from caseforge.cli.root import COMMANDS

    parts = []
    for name, lazy in COMMANDS.items():
        command = lazy.load()
        if isinstance(command, typer.core.TyperGroup):
            parts.append(f"## caseforge {name}\n\n{_help(command.help)}\n")
            for sub_name, sub in command.commands.items():
                parts.append(_command(f"caseforge {name} {sub_name}", sub, level=3))
        else:
            parts.append(_command(f"caseforge {name}", command))
    return "\n".join(parts)


def _command(title: str, command: Any, level: int = 2) -> str:
    lines = [f"{'#' * level} {title}", "", _help(command.help), ""]
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    options = [p for p in command.params if p.param_type_name == "option"]
    usage = " ".join(
        [title, *(_argument(a) if a.required else f"[{_argument(a)}]" for a in arguments),
         "[OPTIONS]" if options else ""]
    )  # fmt: skip
    lines += ["```text", usage.strip(), "```", ""]
    if arguments:
        lines += ["| argument | meaning |", "|---|---|"]
        for argument in arguments:
            lines.append(f"| `{_argument(argument)}` | {_cell(argument.help or '')} |")
        lines.append("")
    if options:
        lines += ["| option | meaning | default |", "|---|---|---|"]
        for option in options:
            names = ", ".join(f"`{n}`" for n in [*option.opts, *option.secondary_opts])
            lines.append(f"| {names} | {_cell(option.help or '')} | {_cell(_default(option))} |")
        lines.append("")
    return "\n".join(lines)


def _argument(argument: Any) -> str:
    name = str(argument.metavar or argument.name).upper().replace("[", "").replace("]", "")
    name = name.removesuffix("...")
    return f"{name}..." if argument.nargs == -1 else name


def _default(option: Any) -> str:
    if option.required:
        return "required"
    value = option.default
    if value is None or value is False or value == () or value == []:
        return ""
    return f"`{getattr(value, 'value', value)}`"


def config_reference() -> str:
    """Every key of ``caseforge.yaml``: type, default and meaning, nested keys dotted."""
    from caseforge.case.suite import SuiteConfig

    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key, info, owner in walk_fields(SuiteConfig):
        lines.append(
            f"| `{key}` | {_cell(type_name(info.annotation))} | {_cell(_field_default(info))} "
            f"| {_cell(field_meaning(info, owner))} |"
        )
    return "\n".join(lines) + "\n"


def config_keys() -> list[str]:
    """Every key path of ``caseforge.yaml`` (``gate.rules[].metric``)."""
    from caseforge.case.suite import SuiteConfig

    return [key for key, _, _ in walk_fields(SuiteConfig)]


def walk_fields(
    model: type[BaseModel], prefix: str = "", above: tuple[type[BaseModel], ...] = ()
) -> Iterator[tuple[str, FieldInfo, type[BaseModel]]]:
    """Each field of ``model`` and, below a field holding models, their fields: (the dotted
    key, its info, the model it belongs to). A model holding itself (a span's ``children``)
    is walked once."""
    for name, info in model.model_fields.items():
        key = f"{prefix}{info.alias or name}"
        yield key, info, model
        for inner, suffix in _models_in(info.annotation):
            if inner is not model and inner not in above:
                yield from walk_fields(inner, f"{key}{suffix}.", (*above, model))


def _models_in(annotation: object) -> Iterator[tuple[type[BaseModel], str]]:
    """The models a field holds, and how a key path reaches them (``[]`` for a list)."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation, ""
    elif origin in (list, tuple):
        for arg in typing.get_args(annotation):
            for model, suffix in _models_in(arg):
                yield model, f"[]{suffix}"
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _models_in(arg)


def field_meaning(info: FieldInfo, owner: type[BaseModel]) -> str:
    """A field's description; else, for a field holding a model, that model's docstring."""
    if info.description:
        return info.description
    for model, _ in _models_in(info.annotation):
        return _help(model.__doc__)
    return ""


def type_name(annotation: object) -> str:
    """A type as a reader writes it: ``list[str] | None``, ``int``, ``'a' | 'b'``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a) for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(annotation))
    if origin is typing.Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin is not None:
        args = ", ".join(type_name(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "null"
    return getattr(annotation, "__name__", str(annotation))


def _field_default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        made = info.default_factory()  # type: ignore[call-arg]
        return "" if isinstance(made, BaseModel) else f"`{json.dumps(made)}`"
    if info.default is PydanticUndefined or info.default is None:
        return ""
    return f"`{json.dumps(info.default, default=str)}`"


def modes_reference() -> str:
    """The built-in check modes: what each checks, its fields, strength and what it reads."""
    from caseforge.checks import mode_table
    from caseforge.checks.text import TextOptions

    lines = []
    for name, spec in mode_table().items():
        lines += [f"### `{name}`", "", _help(spec.model.__doc__), ""]
        on_replies = (
            " · not on `replies` (it compares a whole list)"
            if spec.reads.value == "field" and not spec.model.per_reply
            else ""
        )
        lines.append(
            f"Strength {spec.strength} (the criteria audit's order: a change to a weaker mode "
            f"loosens the case) · reads {spec.reads.value}"
            + (f" · item metrics over `{spec.items_field}`" if spec.feeds_items else "")
            + on_replies
            + "."
        )
        # A text option the mode refuses (``word`` on ``exact``) is inherited, not offered.
        offered = getattr(spec.model, "options", {})
        refused: frozenset[str] = getattr(spec.model, "refused", frozenset())  # not for this mode
        fields = [
            (k, i)
            for k, i in spec.model.model_fields.items()
            if k != "mode"
            and k not in refused
            and not (k in TextOptions.model_fields and k not in offered)
        ]
        if fields:
            lines += ["", *_HEAD]
            for key, info in fields:
                lines.append(
                    f"| `{key}` | {_cell(type_name(info.annotation))} | "
                    f"{_cell(_field_default(info))} | {_cell(info.description or '')} |"
                )
        if name == "spans":
            lines += ["", *_span_matcher_reference()]
        lines.append("")
    return "\n".join(lines) + "\n" + tool_calls_reference()


_HEAD = ["| field | type | default | meaning |", "|---|---|---|---|"]


def _rows(model: type[BaseModel]) -> list[str]:
    return [
        f"| `{key}` | {_cell(type_name(info.annotation))} | {_cell(_field_default(info))} "
        f"| {_cell(info.description or '')} |"
        for key, info in model.model_fields.items()
    ]


def _span_matcher_reference() -> list[str]:
    """A span matcher of ``spans``, in the grammar ``tool_calls``' call matcher shares."""
    from caseforge.checks.spans import SpanMatcher

    return [
        f"A span (in `must_have`, `must_not_have`, `order`): {_help(SpanMatcher.__doc__)} A "
        "plain name (or glob) is that span with any attributes; a `count` is as in "
        "`tool_calls` below, and so is `order`, one chain or several.",
        "",
        *_HEAD,
        *_rows(SpanMatcher),
    ]


def tool_calls_reference() -> str:
    """The ``tool_calls`` form: its fields, and those of a call matcher and a count."""
    from caseforge.checks.builtin import TOOL_CALLS_STRENGTH
    from caseforge.checks.grammar import Count
    from caseforge.checks.tools import CallMatcher, ToolCallsCheck

    rows, head = _rows, _HEAD
    lines = [
        "### `tool_calls`",
        "",
        _help(ToolCallsCheck.__doc__),
        "",
        f"Strength {TOOL_CALLS_STRENGTH} (the criteria audit's order) · reads the tool calls, "
        "each with its arguments.",
        "",
        *head,
        '| `mode` | `"tool_calls"` |  | Says what the check is, as `field: tool_calls` does. |',
        *rows(ToolCallsCheck),
        "",
        f"A call (in `must_call`, `must_not_call`, `order`): {_help(CallMatcher.__doc__)} A "
        "plain name is a call of that tool with any arguments.",
        "",
        *head,
        *rows(CallMatcher),
        "",
        f"A `count`: {_help(Count.__doc__)} `count: 2` is `{{min: 2, max: 2}}`.",
        "",
        *head,
        *rows(Count),
    ]
    return "\n".join(lines) + "\n"


def exit_codes_reference() -> str:
    """The exit codes every command shares."""
    lines = ["| code | meaning |", "|---|---|"]
    lines += [f"| {code} | {_cell(meaning)} |" for code, meaning in EXIT_CODES.items()]
    return "\n".join(lines) + "\n"


def model_reference(model: type[BaseModel], leave_out: frozenset[str] = frozenset()) -> str:
    """A model's fields: name, type, default and meaning (``leave_out``: top-level fields
    that are not the reader's to write)."""
    lines = ["| field | type | default | meaning |", "|---|---|---|---|"]
    for key, info, owner in walk_fields(model):
        if re.split(r"[.\[]", key, maxsplit=1)[0] in leave_out:
            continue
        lines.append(
            f"| `{key}` | {_cell(type_name(info.annotation))} | {_cell(_field_default(info))} "
            f"| {_cell(field_meaning(info, owner))} |"
        )
    return "\n".join(lines) + "\n"


def case_reference() -> str:
    """The case file's fields (the JSON Schema `caseforge schema` prints says the rest)."""
    from caseforge.case.model import Case

    return model_reference(Case)


def report_reference() -> str:
    """``report.json``'s fields."""
    from caseforge.report.model import RunReport

    return model_reference(RunReport)


def agent_request_reference() -> str:
    from caseforge.agent.protocol import AgentRequest

    return model_reference(AgentRequest)


def agent_result_reference() -> str:
    from caseforge.agent.protocol import CASEFORGE_FILLS, AgentResult

    return model_reference(AgentResult, CASEFORGE_FILLS)


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "config": config_reference,
    "modes": modes_reference,
    "exit-codes": exit_codes_reference,
    "case": case_reference,
    "report": report_reference,
    "agent-request": agent_request_reference,
    "agent-result": agent_result_reference,
}


def _help(text: str | None) -> str:
    """A docstring's or help's first paragraph, on one line."""
    if not text:
        return ""
    first = inspect.cleandoc(text).split("\n\n")[0]
    return " ".join(first.split())


def _cell(text: str) -> str:
    """Text fit for one Markdown table cell: on one line, its pipes escaped, and angle
    brackets outside code spans written as entities (``alt_<key>`` is not a tag)."""
    pieces = " ".join(text.split()).replace("|", "\\|").split("`")
    for index in range(0, len(pieces), 2):
        pieces[index] = pieces[index].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(pieces)
