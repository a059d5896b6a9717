"""The table of check modes: one :class:`ModeSpec` per mode, from which the case model's
check union, the grading paths, the item metrics and the audit's strength order are derived.

The built-in table lists the built-in classes; a suite's table adds the modes of its
``checks:`` module and of installed ``caseforge.checks`` entry points (``checks/custom.py``).
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, cast

from pydantic import BaseModel, Discriminator, Tag

from caseforge.checks.base import BaseCheck, OptionOrder, Reads
from caseforge.checks.builtin import (
    BUILTIN_CHECKS,
    TOOL_CALLS_STRENGTH,
    IncludeShorthand,
    UndeclaredCheck,
)
from caseforge.checks.spans import SpansCheck
from caseforge.checks.tools import ToolCallsCheck

if TYPE_CHECKING:
    from typing_extensions import TypeForm

#: Tags of the check forms that are not modes; no mode may take these names.
FORMS = ("shorthand", "tool_calls", "undeclared")

Check = BaseCheck | IncludeShorthand | ToolCallsCheck | UndeclaredCheck


def mode_name_of(model: type[BaseCheck]) -> str | None:
    """The one name in a check class's ``mode: Literal["…"]``, or ``None``."""
    info = model.model_fields.get("mode")
    if info is None or typing.get_origin(info.annotation) is not typing.Literal:
        return None
    names = typing.get_args(info.annotation)
    return names[0] if len(names) == 1 and isinstance(names[0], str) else None


@dataclass(frozen=True)
class ModeSpec:
    """Everything caseforge knows about one check mode."""

    name: str
    model: type[BaseCheck]
    strength: int
    reads: Reads
    feeds_items: bool = False
    items_field: str | None = None
    items_kind: str = "values-removed"
    guard: bool = False
    pins: bool = False
    options: Mapping[str, OptionOrder] = field(default_factory=dict)
    source: str = "caseforge"

    @property
    def builtin(self) -> bool:
        return self.source == "caseforge"

    @classmethod
    def of(cls, model: type[BaseCheck], source: str = "caseforge") -> ModeSpec:
        name = mode_name_of(model)
        if name is None:
            raise ValueError(f'{model.__name__} has no `mode: Literal["…"]` field')
        return cls(
            name=name,
            model=model,
            strength=model.strength,
            reads=model.reads,
            feeds_items=model.feeds_items,
            items_field=model.items_field,
            items_kind=model.items_kind,
            guard=model.guard,
            pins=model.pins,
            options=dict(model.options),
            source=source,
        )


class ModeTable(Mapping[str, ModeSpec]):
    """Check modes by name, in declaration order (built-ins first)."""

    def __init__(self, specs: Iterable[ModeSpec]) -> None:
        self._specs: dict[str, ModeSpec] = {}
        for spec in specs:
            known = self._specs.get(spec.name)
            if known is not None:
                raise ValueError(
                    f"check mode {spec.name!r} is declared twice ({known.source}, {spec.source})"
                )
            if spec.name in FORMS:
                raise ValueError(f"{spec.source}: {spec.name!r} is reserved for a check form")
            self._specs[spec.name] = spec
        self._unions: dict[bool, TypeForm[Check]] = {}

    def __getitem__(self, name: str) -> ModeSpec:
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __hash__(self) -> int:
        return hash(tuple(spec.model for spec in self._specs.values()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModeTable):
            return NotImplemented
        return [s.model for s in self.values()] == [s.model for s in other.values()]

    @property
    def custom(self) -> list[ModeSpec]:
        """The modes a suite or a package declared."""
        return [spec for spec in self._specs.values() if not spec.builtin]

    def plus(self, specs: Iterable[ModeSpec]) -> ModeTable:
        """This table with more modes (a clash with a known mode is a ``ValueError``)."""
        return ModeTable([*self._specs.values(), *specs])

    def strength(self, mode: str) -> int | None:
        """The audit strength of a mode or form, ``None`` for a mode no declaration knows."""
        if mode == "tool_calls":
            return TOOL_CALLS_STRENGTH
        spec = self._specs.get(mode)
        return spec.strength if spec is not None else None

    def union(self, lenient: bool = False) -> TypeForm[Check]:
        """The pydantic type of one ``expect`` entry: a union discriminated by mode (or by
        form). ``lenient`` reads an unknown mode as :class:`UndeclaredCheck` instead of
        rejecting it, for stored runs and the git history."""
        cached = self._unions.get(lenient)
        if cached is not None:
            return cached
        members: list[object] = [Annotated[s.model, Tag(s.name)] for s in self._specs.values()]
        members += [
            Annotated[IncludeShorthand, Tag("shorthand")],
            Annotated[ToolCallsCheck, Tag("tool_calls")],
        ]
        if lenient:
            members.append(Annotated[UndeclaredCheck, Tag("undeclared")])
        names = ", ".join([*self._specs, "tool_calls"])
        union = _annotated(
            _union(members),
            Discriminator(
                _discriminator(frozenset(self._specs), lenient),
                custom_error_type="check_mode",
                custom_error_message=(
                    f"a check needs `mode` (one of: {names}), or the shorthand "
                    "`must_include`/`must_not_include`, or `must_call`/`must_not_call` on "
                    "tool_calls"
                ),
                custom_error_context={"modes": names},
            ),
        )
        # Every member is one of the ``Check`` classes (or a subclass of one).
        typed = cast("TypeForm[Check]", union)
        self._unions[lenient] = typed
        return typed


# A union of this table's classes is built at run time, which no static type can name.
def _union(members: list[object]) -> object:
    return typing.Union.__getitem__(tuple(members))


def _annotated(type_: object, *metadata: object) -> object:
    return Annotated.__class_getitem__((type_, *metadata))  # type: ignore[attr-defined]


def _discriminator(names: frozenset[str], lenient: bool) -> typing.Callable[[object], str | None]:
    def kind(data: object) -> str | None:
        if isinstance(data, BaseModel):
            if isinstance(data, IncludeShorthand):
                return "shorthand"
            if isinstance(data, ToolCallsCheck):
                return "tool_calls"
            if isinstance(data, UndeclaredCheck):
                return "undeclared" if lenient else None
            mode = getattr(data, "mode", None)
            return str(mode) if mode is not None else None
        if not isinstance(data, dict):
            return None
        if "mode" in data:
            mode = data["mode"]
            if isinstance(mode, str) and mode in names:
                return mode
            if mode == "tool_calls":  # the form, named as a mode
                return "tool_calls"
            return "undeclared" if lenient and isinstance(mode, str) else "unknown-mode"
        if {"must_call", "must_not_call", "order"} & data.keys():
            return "tool_calls"
        if {"must_include", "must_not_include"} & data.keys():
            return "shorthand"
        return None

    return kind


# ``spans`` builds on the value checks of ``builtin`` (through ``checks.grammar``), so it
# joins them here rather than in BUILTIN_CHECKS.
_MODELS: tuple[type[BaseCheck], ...] = (*BUILTIN_CHECKS, SpansCheck)
BUILTIN_MODES = ModeTable(ModeSpec.of(model) for model in _MODELS)
