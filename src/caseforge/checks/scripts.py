"""The ``javascript`` and ``python`` check modes (promptfoo's assertions of those names): code
kept with the case that reads the graded field as ``output`` and the case as ``context``.

``context`` is ``{vars: <the case's input>, prompt: <its input's prompt text, or null>,
test: {vars, description}}`` (the description: the case's ``provenance.description``, else
its ``note``). The code returns its verdict, read as promptfoo reads it:

- a boolean: pass when true;
- a number, a score: with ``threshold``, pass when the score is at least the threshold,
  else when it is above 0;
- an object with ``pass``, ``score`` and ``reason``: ``pass`` decides (a ``score`` below
  ``threshold`` fails it), else the score as above; ``reason`` becomes the check's reason.

JavaScript runs in an embedded V8 (``checks/v8.py``: no Node, no file system, no network;
1 s and 64 MB per check). Code that needs Node (``require``, ``process``, ``fs``…) is refused
when the suite loads. What the code throws, a time or memory limit exceeded, or a value of
another kind fails the check with the reason, as in promptfoo.

Python is suite code, run in this process like a suite's own check modes
(``checks/custom.py``): what it raises, an ``exit()`` included, is that check's ``error``
with the reason, never caseforge's. Neither mode can be stopped mid-way by caseforge but
JavaScript's limits: keep Python checks quick.
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import math
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import ClassVar, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from caseforge.checks.base import (
    BaseCheck,
    OptionOrder,
    SuiteFileError,
    TrialFacts,
    Verdict,
    failed,
    passed,
    show,
    suite_path,
)
from caseforge.errors import EnvError
from caseforge.imports import SuiteImportError, import_suite_file
from caseforge.results import CheckStatus

# What only Node has: a script using it cannot run in the embedded engine.
_NODE = re.compile(
    r"(?<![\w$.])(?:require\s*\(|import\s*\(|import\s+[\w{*'\"]|process\s*\.|fs\s*\."
    r"|Buffer\s*\.|__dirname\b|__filename\b|global\s*\.)"
)
# Strings, template literals and comments, blanked out before looking for Node's names.
_QUOTED = re.compile(
    r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|`(?:[^`\\]|\\.)*`|//[^\n]*|/\*.*?\*/", re.S
)


def needs_node(code: str) -> str | None:
    """What in ``code`` only Node has (``require(``, ``process.``…), or ``None``."""
    found = _NODE.search(_QUOTED.sub(lambda m: " " * len(m.group(0)), code))
    return " ".join(found.group(0).split()) if found else None


def script_context(trial: TrialFacts) -> dict[str, object]:
    """The ``context`` promptfoo hands an assertion, from the case (a copy)."""
    variables = copy.deepcopy(dict(trial.input))
    test: dict[str, object] = {"vars": copy.deepcopy(variables)}
    if trial.description:
        test["description"] = trial.description
    return {"vars": variables, "prompt": trial.prompt, "test": test}


def read_verdict(
    value: object, threshold: float | None, language: str, texts: bool = False
) -> Verdict | str:
    """The verdict of what a script returned, or (a ``str``) why it cannot be read.
    ``texts``: Python's ``"true"``, ``"false"`` and numbers as text count too."""
    if texts and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            value = lowered == "true"
        else:
            try:
                value = float(lowered)
            except ValueError:
                return f"returned the text {show(value)}"
    if isinstance(value, bool):
        return passed() if value else failed(f"the {language} code returned false")
    if isinstance(value, int | float):
        return _score(float(value), threshold, language)
    if isinstance(value, dict):
        reason = value.get("reason")
        said = f": {reason}" if isinstance(reason, str) and reason else ""
        score = value.get("score")
        verdict = value.get("pass", value.get("pass_"))
        if isinstance(score, bool) or (score is not None and not isinstance(score, int | float)):
            return f"returned a score that is not a number: {show(score)}"
        if verdict is None:
            if score is None:
                return f"returned an object without `pass` or `score`: {show(value)}"
            scored = _score(float(score), threshold, language)
            return scored if scored.status is not CheckStatus.PASS else passed(said[2:])
        if threshold is not None and score is not None and score < threshold:
            return failed(f"score {score:g} is below the threshold {threshold:g}{said}")
        if verdict:
            return passed(said[2:])
        return failed(said[2:] or f"the {language} code returned pass: false")
    return f"returned {show(value)}"


def _score(score: float, threshold: float | None, language: str) -> Verdict:
    if not math.isfinite(score):
        return failed(f"the {language} code returned {score}, not a finite score")
    if threshold is not None:
        if score >= threshold:
            return passed()
        return failed(f"score {score:g} is below the threshold {threshold:g}")
    return passed() if score > 0 else failed(f"the {language} code returned {score:g}")


class _ScriptCheck(BaseCheck):
    """What both script modes share: the code inline or in a file, and the threshold."""

    expected_field: ClassVar[str | None] = None
    strength: ClassVar[int] = 50
    uses_trial: ClassVar[bool] = True
    options: ClassVar[dict[str, OptionOrder]] = {
        "threshold": OptionOrder("lower", kind="threshold-lowered")
    }
    language: ClassVar[str] = ""
    suffixes: ClassVar[tuple[str, ...]] = ()

    code: str | None = Field(
        None, description="Inline code: an expression, or a function body that returns."
    )
    file: str | None = Field(
        None, description="A script of the suite (a path relative to the suite folder)."
    )
    threshold: float | None = Field(
        None,
        allow_inf_nan=False,
        description="A returned score passes when at least this (without it: above 0).",
    )

    @model_validator(mode="after")
    def _code_or_file(self) -> _ScriptCheck:
        if (self.code is None) == (self.file is None):
            raise ValueError(f"a {self.mode} check needs `code` or `file`, exactly one of them")
        if self.code is not None and not self.code.strip():
            raise ValueError("`code` is empty")
        if self.file is not None and not self.file.endswith(self.suffixes):
            raise ValueError(f"`file`: {self.file!r} is not a {'/'.join(self.suffixes)} file")
        return self

    def render(self) -> str:
        if self.file is not None:
            return f"{self.mode} {self.file}"
        first = (self.code or "").strip().splitlines()[0]
        return f"{self.mode} {show(first, 60)}"

    @property
    def expected(self) -> object:
        return self.file if self.file is not None else self.code

    def grade(self, actual: object) -> Verdict:
        return Verdict(
            CheckStatus.ERROR,
            f"a {self.mode} check is graded with its case-trial (grade_in), not alone",
        )


class JavascriptCheck(_ScriptCheck):
    """JavaScript code returns the verdict on ``output`` (the field) and ``context`` (the
    case): inline ``code`` (an expression such as ``output.length < 100``, or a function
    body that returns), or a ``file`` whose ``module.exports`` (or default export, or
    ``function``) is called as ``fn(output, context)``. Runs in an embedded V8: no Node, no
    files, no network; 1 s and 64 MB at most. Needs the ``javascript`` extra."""

    language: ClassVar[str] = "JavaScript"
    suffixes: ClassVar[tuple[str, ...]] = (".js", ".cjs", ".mjs")

    mode: Literal["javascript"]
    function: str | None = Field(
        None,
        pattern=r"^[A-Za-z_$][\w$]*$",
        description="With `file`: the exported function to call (default: the export itself, "
        "or its default).",
    )
    _source: str | None = PrivateAttr(None)

    @field_validator("code")
    @classmethod
    def _no_node(cls, code: str | None) -> str | None:
        if code is not None:
            node = needs_node(code)
            if node is not None:
                raise ValueError(f"needs Node: `{node}` (no Node in the embedded engine)")
            wrong = javascript_syntax_error("code", code)
            if wrong is not None:
                raise ValueError(f"not valid JavaScript: {wrong}")
        return code

    @model_validator(mode="after")
    def _function_with_file(self) -> JavascriptCheck:
        if self.function is not None and self.file is None:
            raise ValueError("`function` names an export of `file`; inline `code` has none")
        return self

    def bind(self, suite_dir: Path) -> None:
        if self.file is None:
            return
        path = suite_path(suite_dir, self.file, "file")
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SuiteFileError("file", f"{self.file}: cannot read it: {exc}") from None
        node = needs_node(source)
        if node is not None:
            raise SuiteFileError(
                "file", f"needs Node: {self.file} uses `{node}` (no Node in the embedded engine)"
            )
        wrong = javascript_syntax_error("file", source)
        if wrong is not None:
            raise SuiteFileError("file", f"{self.file} is not valid JavaScript: {wrong}")
        self._source = source

    @classmethod
    def require_environment(cls) -> None:
        from caseforge.checks.v8 import require

        require()

    def grade_in(self, actual: object, trial: TrialFacts) -> Verdict:
        from caseforge.checks.v8 import engine

        if self.code is not None:
            kind: Literal["code", "file"] = "code"
            source = self.code
        elif self._source is not None:
            kind, source = "file", self._source
        else:
            return Verdict(
                CheckStatus.ERROR,
                f"the script {self.file} was not read: load the case with its suite "
                "(load_suite, load_case)",
            )
        key = hashlib.sha1(f"{kind}\0{self.function}\0{source}".encode()).hexdigest()
        outcome = engine().run(key, kind, source, self.function, actual, script_context(trial))
        if outcome.kind != "value":
            return failed(f"the JavaScript code {_WHAT[outcome.kind]}: {outcome.message}")
        if outcome.type in (
            "undefined",
            "promise",
            "function",
            "symbol",
            "bigint",
            "unserializable",
        ):
            what = {"undefined": "nothing (undefined)", "promise": "a Promise (async code is "
                    "not supported)"}.get(outcome.type, f"a {outcome.type}")  # fmt: skip
            return failed(f"the JavaScript code returned {what}: return a boolean, a number "
                          "or {pass, score, reason}")  # fmt: skip
        verdict = read_verdict(outcome.value, self.threshold, self.language)
        if isinstance(verdict, str):
            return failed(
                f"the JavaScript code {verdict}: return a boolean, a number or "
                "{pass, score, reason}"
            )
        return verdict


_WHAT = {"threw": "threw", "timeout": "was stopped", "memory": "was stopped"}

_MISSING = object()


class PythonCheck(_ScriptCheck):
    """Python code returns the verdict on ``output`` (the field) and ``context`` (the
    case): inline ``code`` (an expression, or a function body that returns), or a ``file``
    of the suite whose ``get_assert(output, context)`` (or ``function``) is called. Suite
    code, run in this process: what it raises is the check's error."""

    language: ClassVar[str] = "Python"
    suffixes: ClassVar[tuple[str, ...]] = (".py",)

    mode: Literal["python"]
    function: str = Field(
        "get_assert",
        pattern=r"^[A-Za-z_]\w*$",
        description="With `file`: the function to call.",
    )
    _compiled: Callable[[object, object], object] | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _compiles(self) -> PythonCheck:
        if self.code is not None:
            self._compiled = compile_python(self.code)
        return self

    def bind(self, suite_dir: Path) -> None:
        if self.file is None:
            return
        path = suite_path(suite_dir, self.file, "file")
        try:
            module = import_suite_file(path, "assertion")
        except SuiteImportError as exc:
            where = f"{self.file}:{exc.line}" if exc.line else self.file
            what = f"{type(exc.error).__name__}: {exc.error}" if exc.error else "cannot import it"
            raise SuiteFileError("file", f"{where}: {what}") from None
        function = getattr(module, self.function, _MISSING)
        if function is _MISSING or not callable(function):
            raise SuiteFileError(
                "function", f"{self.file} has no function {self.function}(output, context)"
            )
        self._compiled = function

    def grade_in(self, actual: object, trial: TrialFacts) -> Verdict:
        function = self._compiled
        if function is None:
            return Verdict(
                CheckStatus.ERROR,
                f"the file {self.file} was not imported: load the case with its suite "
                "(load_suite, load_case)",
            )
        # A copy: the code may change what it is handed, never the output other checks read.
        value = function(copy.deepcopy(actual), script_context(trial))
        verdict = read_verdict(value, self.threshold, self.language, texts=True)
        if isinstance(verdict, str):
            return Verdict(
                CheckStatus.ERROR,
                f"the Python code {verdict}: return a bool, a number or "
                "{'pass': ..., 'score': ..., 'reason': ...}",
            )
        return verdict


def javascript_syntax_error(kind: Literal["code", "file"], source: str) -> str | None:
    """Why ``source`` does not compile in the embedded V8, or None (also when the
    ``javascript`` extra is not installed: a run then stops before it starts)."""
    from caseforge.checks import v8

    try:
        v8.require()
    except EnvError:
        return None
    return v8.engine().syntax_error(kind, source)


def compile_python(code: str) -> Callable[[object, object], object]:
    """``code`` as a function of ``(output, context)``: an expression's value, or a body
    that returns. A ``ValueError`` names a syntax error and its line."""
    text = textwrap.dedent(code).strip("\n")
    try:
        expression: CodeType | None = compile(text.strip(), "<python check>", "eval")
    except SyntaxError:
        expression = None
    if expression is not None:
        compiled = expression

        def evaluate(output: object, context: object) -> object:
            scope = {"__builtins__": builtins, "output": output, "context": context}
            return eval(compiled, scope)

        return evaluate
    source = "def __caseforge_check__(output, context):\n" + textwrap.indent(text, "    ")
    try:
        body = compile(source, "<python check>", "exec")
    except SyntaxError as exc:
        line = max((exc.lineno or 2) - 1, 1)
        raise ValueError(f"not valid Python: {exc.msg} (line {line} of the code)") from None
    scope: dict[str, object] = {"__builtins__": builtins, "__name__": "caseforge_python_check"}
    exec(body, scope)
    made = scope["__caseforge_check__"]
    assert callable(made)
    return made
