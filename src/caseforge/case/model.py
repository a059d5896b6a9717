"""The case model: one golden-dataset case, its input, and its goal state (``expect``).

A check is ``{mode: M, value: V}`` or ``{mode: M, values: [...]}``; the shorthand
``{must_include: [...], must_not_include: [...]}`` puts two checks on one field, and
``tool_calls: {must_call: [...], must_not_call: [...], order: [...]}`` is graded on the
recorded tool calls. Any check may name the ``oracle`` (and its ``args``) that computed its
expectation, and a ``field`` other than its key.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from functools import cached_property
from types import GenericAlias
from typing import TYPE_CHECKING, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from caseforge.case.conversation import Conversation
from caseforge.case.positions import first_error
from caseforge.checks import (
    BUILTIN_MODES,
    BaseCheck,
    Check,
    ExactCheck,
    IncludeShorthand,
    ModeTable,
    MustIncludeCheck,
    MustNotIncludeCheck,
    ToolCallsCheck,
)
from caseforge.checks.tools import TOOL_CALLS
from caseforge.jsontypes import JSONObject

REPLIES = "replies"  # reserved: every agent reply (grade/trial.py grades it reply by reply)

if TYPE_CHECKING:
    from typing_extensions import TypeForm

ID_PATTERN = r"^[a-z0-9-]+$"
Source = Literal["manual", "synthetic", "error-analysis", "production", "imported"]
Split = Literal["dev", "test"]
EXPECT_DESCRIPTION = "The goal state: one check per field of the agent's output."


MODES: dict[str, type[BaseCheck]] = {name: spec.model for name, spec in BUILTIN_MODES.items()}
CheckSpec = BUILTIN_MODES.union()


class Case(BaseModel):
    """One case of a golden dataset: the input, the goal state and the metadata."""

    # A NaN or Infinity a case expects is written as such in the run's case snapshot (JSON
    # has no such number; Python's and pydantic's readers take the bare tokens back).
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    id: str = Field(pattern=ID_PATTERN, description="Slug; never renamed or reused.")
    input: dict[str, object] = Field(description="The mapping handed to the agent.")
    if TYPE_CHECKING:
        expect: dict[str, Check]
    else:  # the union pydantic validates, discriminated by mode
        expect: dict[str, CheckSpec] = Field(description=EXPECT_DESCRIPTION)
    tags: list[str] = Field(default_factory=list)
    source: Source = "manual"
    split: Split | None = None
    group: str | None = Field(
        default=None,
        pattern=ID_PATTERN,
        description="A family of near-identical cases, kept on one side of the split.",
    )
    added: dt.date | None = None
    note: str = ""
    provenance: dict[str, object] = Field(default_factory=dict)
    clock: dt.datetime | None = Field(default=None, description="Frozen clock for the case.")
    seed: int | None = Field(default=None, description="Fixed seed; else derived from id.")
    conversation: Conversation | None = Field(
        default=None, description="A multi-turn case: a scripted or simulated user."
    )

    @field_validator("expect")
    @classmethod
    def _tool_calls_placement(cls, expect: dict[str, Check]) -> dict[str, Check]:
        if not expect:
            raise PydanticCustomError(
                "no_checks",
                "a case with no check always passes: add at least one under `expect` "
                "(an ungradable field is `{mode: ignore, reason: ...}`)",
            )
        for key, check in expect.items():
            problem = placement_problem(key, check)
            if problem is not None:
                message, part = problem
                raise PydanticCustomError(
                    "check_placement", message, {"field": key, "part": part or ""}
                )
        return expect

    @model_validator(mode="after")
    def _turn_checks(self) -> Case:
        """Read each scripted turn's ``expect`` with this case's own check modes."""
        conversation = self.conversation
        if conversation is None or not any(t.expect for t in conversation.script):
            return self
        adapter = _expect_adapter(type(self))
        for index, step in enumerate(conversation.script):
            if not step.expect:
                continue
            try:
                step.expect = adapter.validate_python(step.expect)
            except ValidationError as exc:
                # Worded as the case's own expect: its errors below `expect`.
                below: list[ErrorDetails] = [
                    {**e, "loc": ("expect", *e["loc"])} for e in exc.errors()
                ]
                message, loc = first_error(below, type(self))
                where = ".".join(str(part) for part in loc[1:])
                raise PydanticCustomError(
                    "turn_check",
                    "conversation.script.{index}.expect.{where}: {message}",
                    {"index": index, "where": where, "message": message},
                ) from None
            for key, check in step.expect.items():
                problem = placement_problem(key, check, scripted=True)
                if problem is not None:
                    message, part = problem
                    where = ".".join(p for p in (key, part) if p)
                    raise PydanticCustomError(
                        "turn_check",
                        "conversation.script.{index}.expect.{where}: {message}",
                        {"index": index, "where": where, "message": message},
                    )
        return self

    def checks(self) -> list[tuple[str, str, Check]]:
        """``(name, field, check)`` for each check, the shorthand expanded into two."""
        return self._expanded_checks

    @cached_property
    def _expanded_checks(self) -> list[tuple[str, str, Check]]:
        return list(self._expand())

    def _expand(self) -> Iterator[tuple[str, str, Check]]:
        for key, check in self.expect.items():
            target = target_field(key, check)
            if isinstance(check, IncludeShorthand):
                if check.must_include:
                    yield (
                        f"{key}.must_include",
                        target,
                        MustIncludeCheck(
                            mode="must_include",
                            values=check.must_include,
                            turn=check.turn,
                            **check.text_options,
                        ),
                    )
                if check.must_not_include:
                    yield (
                        f"{key}.must_not_include",
                        target,
                        MustNotIncludeCheck(
                            mode="must_not_include",
                            values=check.must_not_include,
                            turn=check.turn,
                            **check.text_options,
                        ),
                    )
            else:
                yield key, target, check
        if self.conversation is not None:
            for number, step in enumerate(self.conversation.script, start=1):
                for key, check in step.expect.items():
                    # The agent's answer to the n-th scripted message is its n-th turn.
                    pinned = check.model_copy(update={"turn": number})
                    nested = Case.model_construct(id=self.id, input={}, expect={key: pinned})
                    for name, target, inner in nested._expand():
                        yield f"turn{number}.{name}", target, inner

    def category(self) -> str:
        """The case's category: ``expect.category``'s exact value, else its first tag."""
        check = self.expect.get("category")
        if isinstance(check, ExactCheck) and isinstance(check.value, str):
            return check.value
        return self.tags[0] if self.tags else "(none)"

    def item_fields(self) -> dict[str, list[object]]:
        """The checks whose expected items feed the item-level metrics (``exact_set``, and
        any mode declaring ``feeds_items``), with those items."""
        found = {}
        for name, _, check in self.checks():
            if isinstance(check, BaseCheck) and check.feeds_items:
                found[name] = check.items or []
        return found

    @property
    def sensitive(self) -> bool:
        """Marked sensitive (``provenance: {sensitive: true}``; a made-up original written to
        look like one, ``fictional_original: true``; a case read from the private store):
        no content of it goes on caseforge's own exported spans, whatever the suite says."""
        marks = self.provenance
        return marks.get("sensitive") is True or marks.get("fictional_original") is True


def target_field(key: str, check: Check) -> str:
    """The field a check under ``key`` reads: its ``field``, else the key (a tool-call
    check reads the tool calls whatever its key)."""
    if isinstance(check, ToolCallsCheck):
        return TOOL_CALLS
    field = getattr(check, "field", None)
    return field if isinstance(field, str) and field else key


def placement_problem(
    key: str, check: Check, scripted: bool = False
) -> tuple[str, str | None] | None:
    """Why a check cannot stand under ``key`` (and the part of it at fault), or ``None``: a
    tool-call check under a key of its own that does not say it reads the calls, a check
    on ``replies`` pinned to one turn, or a mode that cannot read replies one at a time.
    ``scripted``: under a scripted message, whose checks read that message's answer."""
    if isinstance(check, ToolCallsCheck):
        if key != TOOL_CALLS and check.field is None:
            return (
                "must_call/must_not_call/order check the tool calls: under a key of your own, "
                "say so with `field: tool_calls` (or `mode: tool_calls`)",
                None,
            )
        return None
    if target_field(key, check) != REPLIES:
        return None
    if scripted:
        return (
            "`replies` is every agent reply, and a check under a scripted message reads the "
            "answer to that message: check its `reply` here, or `replies` under the case's "
            "expect",
            "field" if getattr(check, "field", None) else None,
        )
    if getattr(check, "turn", None) is not None:
        return (
            "`replies` is every agent reply: `turn` picks one (check `field: reply` with "
            "`turn` for that)",
            "turn",
        )
    if isinstance(check, BaseCheck) and not check.per_reply:
        return (
            f"mode {check.mode!r} compares a whole list, and `replies` is graded one reply at "
            "a time (any reply passes a requirement, none may break a ban): use "
            "must_include, regex or another text check",
            "mode",
        )
    return None


_MODELS: dict[tuple[ModeTable, bool], type[Case]] = {}


_ADAPTERS: dict[type[Case], TypeAdapter[dict[str, Check]]] = {}


def _expect_adapter(model: type[Case]) -> TypeAdapter[dict[str, Check]]:
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        # The expect field's type is built at run time for the suite's modes (case_model).
        annotation = cast("TypeForm[dict[str, Check]]", model.model_fields["expect"].annotation)
        adapter = TypeAdapter(annotation)
        _ADAPTERS[model] = adapter
    return adapter


def case_model(modes: ModeTable = BUILTIN_MODES, lenient: bool = False) -> type[Case]:
    """The case model for a table of check modes. ``lenient`` reads a mode no declaration
    knows as an ``UndeclaredCheck`` (for stored runs and history) instead of rejecting it."""
    if modes == BUILTIN_MODES and not lenient:
        return Case
    key = (modes, lenient)
    model = _MODELS.get(key)
    if model is None:
        # ``dict[str, <the table's check union>]``, built at run time.
        expect_type = cast(
            "TypeForm[dict[str, Check]]", GenericAlias(dict, (str, modes.union(lenient)))
        )
        model = create_model(
            "Case",
            __base__=Case,
            __module__=__name__,
            expect=(expect_type, Field(description=EXPECT_DESCRIPTION)),
        )
        _MODELS[key] = model
    return model


def case_json_schema(modes: ModeTable = BUILTIN_MODES) -> JSONObject:
    """The JSON Schema of a case file, for editors (``caseforge schema [--suite SUITE]``)."""
    schema = case_model(modes).model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "caseforge case"
    return schema
