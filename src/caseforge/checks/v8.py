"""An embedded V8 (the ``mini-racer`` package, the ``javascript`` extra) for the
``javascript`` check mode: no file system, no network, no Node.

One V8 context serves every javascript check of the process, behind a lock. Each check's
code runs in a function of its own (its ``var``, ``let`` and ``const`` are its own), within
:data:`TIMEOUT_S` of wall time and a heap of :data:`MAX_MEMORY` bytes. Between two checks
the context is reset: a global the code added is deleted, and if the code changed anything
else reachable from ``globalThis`` (a built-in's prototype, a property's value or flags),
the context is thrown away and a fresh one made; after a timeout or running out of memory
too. Measured on a busy 2-core machine: a check costs ~1.0 ms with its reset (~0.9 ms of
it the comparison of everything reachable, ~1,000 objects); a fresh V8 context costs ~1.7
ms bare and ~8 ms with this harness, so one context is reused. A check runs on the calling
thread (the run's event loop, as every check does), so a check that hits its time limit
holds that thread for the second it is allowed.

``mini-racer`` is imported on first use; without it, :func:`engine` raises ``EnvError``.
"""

from __future__ import annotations

import atexit
import json
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from caseforge.errors import EnvError

if TYPE_CHECKING:
    from py_mini_racer import MiniRacer

TIMEOUT_S = 1.0  # wall time per check
MAX_MEMORY = 64 * 1024 * 1024  # the V8 heap, in bytes
INSTALL = "pip install 'caseforge[javascript]'"

# Installed once per context. It keeps what it uses in a closure (code run later cannot
# reach or replace it), compiles each check's code once, and answers a JSON text.
_HARNESS = r"""
(function () {
  'use strict';
  const G = globalThis;
  const FunctionCtor = Function, SyntaxErrorCtor = SyntaxError, TypeErrorCtor = TypeError;
  const stringify = JSON.stringify, ownKeys = Reflect.ownKeys, finite = Number.isFinite;
  const getDesc = Reflect.getOwnPropertyDescriptor;
  const getProto = Reflect.getPrototypeOf, isExt = Reflect.isExtensible, apply = Reflect.apply;
  const deleteProperty = Reflect.deleteProperty, is = Object.is;
  const SetCtor = Set, MapCtor = Map;
  const setHas = Set.prototype.has, setAdd = Set.prototype.add;
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set;
  const push = Array.prototype.push;
  const compiled = new MapCtor();

  function compileInline(code) {
    const trimmed = code.trim().replace(/;+\s*$/, '');
    try {  // an expression, on one line or several
      return new FunctionCtor('output', 'context', 'return (\n' + trimmed + '\n);');
    } catch (e) {
      if (!(e instanceof SyntaxErrorCtor)) throw e;
    }
    if (!trimmed.includes('\n')) {  // one line, as promptfoo reads it
      if (!/^(const|let|var)\s/.test(trimmed)) {
        try {
          return new FunctionCtor('output', 'context', 'return ' + trimmed);
        } catch (e) {
          if (!(e instanceof SyntaxErrorCtor)) throw e;
        }
      }
      // `const s = ...; s > 0.5`: return its last expression
      for (let i = trimmed.lastIndexOf(';'); i > 0; i = trimmed.lastIndexOf(';', i - 1)) {
        try {
          return new FunctionCtor('output', 'context',
            trimmed.slice(0, i + 1) + ' return (' + trimmed.slice(i + 1) + '\n);');
        } catch (e) {
          if (!(e instanceof SyntaxErrorCtor)) throw e;
        }
      }
    }
    return new FunctionCtor('output', 'context', code);  // a function body, with return
  }

  function compileFile(source, name) {
    const module = { exports: {} };
    const text = source.replace(/^\s*export\s+default\s+/m, 'module.exports.default = ');
    new FunctionCtor('module', 'exports', text)(module, module.exports);
    const exported = module.exports;
    let fn;
    if (name) fn = exported == null ? undefined : exported[name];
    else if (typeof exported === 'function') fn = exported;
    else if (exported != null) fn = exported.default;
    if (typeof fn !== 'function') {
      throw new TypeErrorCtor(name
        ? 'the script exports no function ' + name
        : 'the script exports no function (module.exports = function (output, context) {...})');
    }
    return fn;
  }

  function describe(value) {
    const type = value === null ? 'null' : typeof value;
    if (type === 'object' && typeof value.then === 'function') {
      return stringify({ type: 'promise' });
    }
    if (type === 'function' || type === 'undefined' || type === 'symbol' || type === 'bigint') {
      return stringify({ type: type });
    }
    if (type === 'number' && !finite(value)) {
      return stringify({ type: 'number', text: String(value) });
    }
    let text;
    try { text = stringify(value); } catch (e) { return stringify({ type: 'unserializable' }); }
    return '{"type":' + stringify(type) + ',"value":' + text + '}';
  }

  function run(key, kind, source, name, output, context) {
    let fn = apply(mapGet, compiled, [key]);
    if (fn === undefined) {
      fn = kind === 'file' ? compileFile(source, name) : compileInline(source);
      apply(mapSet, compiled, [key, fn]);
    }
    return describe(fn(output, context));
  }

  // Everything reachable from globalThis now, to tell later whether a check changed it.
  const seen = new SetCtor(), watched = [];
  const visit = (o) => {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function')) return;
    if (apply(setHas, seen, [o])) return;
    apply(setAdd, seen, [o]);
    apply(push, watched, [o]);
    for (const k of ownKeys(o)) {
      const d = getDesc(o, k);
      if ('value' in d) visit(d.value); else { visit(d.get); visit(d.set); }
    }
    visit(getProto(o));
  };
  // Compiles without running: '' when the code is valid JavaScript, else the error.
  function syntax(kind, source) {
    try {
      if (kind === 'file') {
        new FunctionCtor('module', 'exports',
          source.replace(/^\s*export\s+default\s+/m, 'module.exports.default = '));
      } else {
        compileInline(source);
      }
    } catch (e) {
      return String(e);
    }
    return '';
  }
  Object.defineProperty(G, '__caseforge_run', { value: run });
  Object.defineProperty(G, '__caseforge_syntax', { value: syntax });
  const snapshot = () => {
    const out = [];
    for (const o of watched) {
      apply(push, out, [isExt(o), getProto(o)]);
      for (const k of ownKeys(o)) {
        const d = getDesc(o, k);
        apply(push, out, [k, d.value, d.get, d.set, d.writable, d.configurable, d.enumerable]);
      }
      apply(push, out, [watched]);  // a separator no property holds
    }
    return out;
  };
  function intact() {
    for (const k of ownKeys(G)) {  // a global a check added: deleted
      if (!apply(setHas, globals, [k])) deleteProperty(G, k);
    }
    const now = snapshot();
    if (now.length !== base.length) return false;
    for (let i = 0; i < now.length; i++) if (!is(now[i], base[i])) return false;
    return true;
  }
  Object.defineProperty(G, '__caseforge_intact', { value: intact });
  visit(G);
  const globals = new SetCtor(ownKeys(G));
  const base = snapshot();
})();
"""


@dataclass(frozen=True)
class Outcome:
    """What running a check's code came to: a ``value`` (``kind`` ``"value"``, with the
    JavaScript ``type``) or a failure to run (``"threw"``, ``"timeout"``, ``"memory"``)
    with its message."""

    kind: Literal["value", "threw", "timeout", "memory"]
    type: str = ""
    value: object = None
    message: str = ""


class Engine:
    """One V8 context and the lock around it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._racer: MiniRacer | None = None
        self._compiled: set[str] = set()  # keys the current context has compiled

    def _fresh(self) -> MiniRacer:
        made: list[MiniRacer] = []
        failures: list[BaseException] = []

        def make() -> None:
            try:
                from py_mini_racer import MiniRacer

                racer = MiniRacer()
                racer.eval(_HARNESS)
                made.append(racer)
            except BaseException as exc:  # handed to the caller's thread
                failures.append(exc)

        # MiniRacer runs its own event loop on a thread of its own only when made where no
        # loop runs; made on a run's loop it would share that loop and ignore its timeout.
        thread = threading.Thread(target=make, name="caseforge-v8", daemon=True)
        thread.start()
        thread.join()
        if failures:
            raise failures[0]
        self._compiled = set()
        return made[0]

    def _drop(self) -> None:
        racer, self._racer = self._racer, None
        if racer is not None:
            racer.close()

    def close(self) -> None:
        """Let go of the context. Called at exit too: a context V8 still holds when the
        interpreter finalizes hangs the process's exit."""
        with self._lock:
            self._drop()

    def run(
        self,
        key: str,
        kind: Literal["code", "file"],
        source: str,
        function: str | None,
        output: object,
        context: object,
    ) -> Outcome:
        """Call the check's code (compiled once per ``key``) with ``output`` and
        ``context``, within the limits."""
        from py_mini_racer import JSEvalException, JSOOMException, JSTimeoutException

        values = (
            json.dumps(output, ensure_ascii=True, default=str),
            json.dumps(context, ensure_ascii=True, default=str),
        )
        with self._lock:
            if self._racer is None:
                self._racer = self._fresh()
            racer = self._racer
            sent = source if key not in self._compiled else ""  # compiled: the key suffices
            args = ", ".join(json.dumps(a, ensure_ascii=True) for a in (key, kind, sent, function))
            try:
                answer = racer.eval(
                    f"__caseforge_run({args}, {values[0]}, {values[1]})",
                    timeout_sec=TIMEOUT_S,
                    max_memory=MAX_MEMORY,
                )
            except JSTimeoutException:
                # V8 stopped the code; the context is kept if the code left it as it was.
                if not self._reset(racer):
                    self._drop()
                return Outcome("timeout", message=f"ran longer than {TIMEOUT_S:g} s")
            except JSOOMException:
                self._drop()
                return Outcome("memory", message=f"used more than {MAX_MEMORY >> 20} MB of heap")
            except JSEvalException as exc:
                if not self._reset(racer):
                    self._drop()
                return Outcome("threw", message=_thrown(str(exc)))
            self._compiled.add(key)
            if not self._reset(racer):
                self._drop()
        described = json.loads(str(answer))
        if described.get("text"):
            return Outcome("value", described["type"], float(described["text"]))
        return Outcome("value", described["type"], described.get("value"))

    def syntax_error(self, kind: Literal["code", "file"], source: str) -> str | None:
        """Why ``source`` is not valid JavaScript (``SyntaxError: …``), or None: compiled,
        never run."""
        from py_mini_racer import JSEvalException, JSTimeoutException

        args = ", ".join(json.dumps(a, ensure_ascii=True) for a in (kind, source))
        with self._lock:
            if self._racer is None:
                self._racer = self._fresh()
            try:
                answer = self._racer.eval(
                    f"__caseforge_syntax({args})", timeout_sec=TIMEOUT_S, max_memory=MAX_MEMORY
                )
            except (JSEvalException, JSTimeoutException):  # a compiler this slow: run it
                return None
        wrong = str(answer)
        token = _TOKEN.fullmatch(wrong)
        if token is not None and token.group(1) not in source:
            return "SyntaxError: unexpected end of input"  # the brace is the wrapper's
        return wrong or None

    def _reset(self, racer: MiniRacer) -> bool:
        try:
            return racer.eval("__caseforge_intact()", timeout_sec=TIMEOUT_S) is True
        except Exception:
            return False


def _thrown(text: str) -> str:
    """The error a script threw, in one line (``Error: boom``), from V8's report."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):  # the last line naming an error, before the stack
        if _ERROR_LINE.match(line):
            return line
    return lines[0] if lines else "an error"


_TOKEN = re.compile(r"SyntaxError: Unexpected token '([})])'")
_ERROR_LINE = re.compile(r"^(?:Uncaught )?(?:[A-Za-z_$][\w$]*)?(?:Error|Exception)\b.*")


_ENGINE: Engine | None = None
_ENGINE_LOCK = threading.Lock()


def engine() -> Engine:
    """This process's engine; ``EnvError`` when mini-racer is not installed."""
    global _ENGINE
    require()
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = Engine()
            atexit.register(_ENGINE.close)
        return _ENGINE


def require() -> None:
    """``EnvError`` unless mini-racer can be imported."""
    try:
        import py_mini_racer  # noqa: F401
    except ImportError:
        raise EnvError(
            f"javascript checks run in an embedded V8, the mini-racer package: {INSTALL}"
        ) from None
