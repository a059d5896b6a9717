"""The ``json`` check mode (promptfoo's ``is-json`` and ``contains-json``): the field is JSON,
or holds some, optionally valid against a JSON Schema given inline or as a file of the suite.

``jsonschema`` is imported only when a check has a schema (it costs ~0.1 s to import)."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, field_validator

from caseforge.checks.base import (
    BaseCheck,
    OptionOrder,
    SuiteFileError,
    Verdict,
    failed,
    passed,
    show,
    suite_path,
)
from caseforge.results import CheckStatus

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

SCHEMA_SUFFIXES = (".json", ".yaml", ".yml")
_START = re.compile(r"[{\[]")


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def parse_json(text: str) -> object:
    """The JSON value ``text`` is, whitespace around it allowed (``ValueError`` if it is
    not one; NaN and Infinity are not JSON)."""
    value, end = _DECODER.raw_decode(text, len(text) - len(text.lstrip()))
    if text[end:].strip():
        raise ValueError(f"extra data after the JSON value at character {end}")
    return value


def json_in(text: str) -> Iterator[object]:
    """Each JSON object or array found in ``text``, left to right (the longest one that
    parses at each ``{`` or ``[``; one found is not searched inside)."""
    position = 0
    while True:
        start = _START.search(text, position)
        if start is None:
            return
        try:
            value, end = _DECODER.raw_decode(text, start.start())
        except ValueError:
            position = start.start() + 1
            continue
        yield value
        position = end


def schema_validator(schema: object) -> Validator:
    """A validator of ``schema`` (its draft from ``$schema``, formats checked); a
    ``ValueError`` saying what is wrong with a schema that is not one."""
    import jsonschema
    from jsonschema.validators import validator_for

    if not isinstance(schema, dict | bool):
        raise ValueError(f"a JSON Schema is an object, not {show(schema)}")
    cls = validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = exc.json_path if exc.path else ""
        at = f" at {where}" if where and where != "$" else ""
        raise ValueError(f"not a valid JSON Schema{at}: {exc.message}") from None
    validator: Validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return validator


def schema_problem(validator: Validator, value: object) -> str | None:
    """Why ``value`` does not match, in one line (``None``: it does)."""
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = error.json_path
    return f"at {where}: {error.message}" if where != "$" else error.message


@lru_cache(maxsize=64)
def _schema_file(path: Path, stamp: tuple[int, int]) -> Validator:
    """The validator of a schema file (read again when the file changes: ``stamp``)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        try:
            data: object = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON: {exc.msg} (line {exc.lineno})") from None
    else:
        from ruamel.yaml import YAML
        from ruamel.yaml.error import YAMLError

        try:
            data = YAML(typ="safe", pure=True).load(text)
        except YAMLError as exc:
            raise ValueError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
    return schema_validator(data)


def _key(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, ensure_ascii=False, default=str)


@lru_cache(maxsize=256)
def _inline(text: str) -> Validator:
    """The validator of an inline schema, built once however many cases repeat it."""
    return schema_validator(json.loads(text))


with warnings.catch_warnings():
    # ``schema`` is promptfoo's name for it; BaseModel's deprecated ``schema()`` is unused.
    warnings.filterwarnings("ignore", message='Field name "schema"', category=UserWarning)

    class JsonCheck(BaseCheck):
        """The field is JSON: the whole text parses (a value already parsed, an object or a
        list, passes), or with ``find``, a JSON object or array appears somewhere in the
        text. With ``schema``, the value (with ``find``: one of the values found) must be
        valid against that JSON Schema."""

        expected_field: ClassVar[str | None] = "schema"
        strength: ClassVar[int] = 50
        options: ClassVar[dict[str, OptionOrder]] = {
            "find": OptionOrder("true", kind="json-found-anywhere"),
            "schema": OptionOrder("dropped", kind="schema-dropped"),
        }

        mode: Literal["json"]
        find: bool = Field(
            False,
            description="false: the whole value must be JSON; true: some JSON object or array "
            "must appear in the text (promptfoo's contains-json).",
        )
        schema: dict[str, Any] | str | None = Field(  # type: ignore[assignment]
            None,
            description="A JSON Schema the value must be valid against: inline, or the path "
            "of a .json or .yaml file relative to the suite folder.",
        )
        _validator: Validator | None = PrivateAttr(None)

        @field_validator("schema")
        @classmethod
        def _schema_is_one(cls, schema: dict[str, Any] | str | None) -> object:
            if isinstance(schema, str) and not schema.endswith(SCHEMA_SUFFIXES):
                raise ValueError(
                    f"{schema!r}: a schema file is a .json or .yaml file of the suite "
                    "(or give the schema inline)"
                )
            if isinstance(schema, dict):
                _inline(_key(schema))  # a ValueError names what is wrong with it
            return schema

        def bind(self, suite_dir: Path) -> None:
            schema = self.schema
            if not isinstance(schema, str):
                return
            path = suite_path(suite_dir, schema, "schema")
            stat = path.stat()
            try:
                self._validator = _schema_file(path, (stat.st_mtime_ns, stat.st_size))
            except (ValueError, OSError) as exc:
                raise SuiteFileError("schema", f"{schema}: {exc}") from None

        def _schema(self) -> Validator | Verdict | None:
            if self.schema is None:
                return None
            if self._validator is None:
                if isinstance(self.schema, str):
                    return Verdict(
                        CheckStatus.ERROR,
                        f"the schema file {self.schema} was not read: load the case with its "
                        "suite (load_suite, load_case)",
                    )
                self._validator = _inline(_key(self.schema))
            return self._validator

        def grade(self, actual: object) -> Verdict:
            if actual is None:
                return failed("the field is empty")
            validator = self._schema()
            if isinstance(validator, Verdict):
                return validator
            if not isinstance(actual, str):  # already a parsed value
                found: list[object] = [actual]
            elif self.find:
                found = list(json_in(actual))
                if not found:
                    return failed(f"no JSON object or array in {show(actual)}")
            else:
                try:
                    found = [parse_json(actual)]
                except ValueError as exc:
                    return failed(f"not valid JSON ({exc}): {show(actual)}")
            if validator is None:
                return passed()
            problems = []
            for value in found:
                problem = schema_problem(validator, value)
                if problem is None:
                    return passed()
                problems.append(problem)
            if len(found) == 1:
                return failed(f"does not match the schema: {problems[0]}")
            return failed(
                f"none of the {len(found)} JSON values found matches the schema (the first: "
                f"{problems[0]})"
            )

        def render(self) -> str:
            what = "json (found in the text)" if self.find else "json"
            if isinstance(self.schema, str):
                return f"{what}, schema {self.schema}"
            return f"{what}, schema {show(self.schema)}" if self.schema is not None else what
