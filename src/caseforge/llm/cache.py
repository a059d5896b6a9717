"""A disk cache of model calls, so re-running and re-grading cost nothing.

The key is a hash of (model, messages, parameters, tools) plus a scope — the trial number
and seed for calls made inside a case-trial — so trials stay independent samples unless
``--reuse-trials`` drops the scope on purpose.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path

from caseforge.jsontypes import JSONObject


def cache_key(request: Mapping[str, object], scope: Mapping[str, object] | None) -> str:
    """The hash identifying a call."""
    payload = {"request": request, "scope": scope or {}}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LLMCache:
    """Responses by key in a SQLite file (``.caseforge/cache/llm.db`` by default)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, model TEXT, response TEXT)"
        )
        self._db.commit()

    def get(self, key: str) -> JSONObject | None:
        with self._lock:
            row = self._db.execute("SELECT response FROM calls WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        response: JSONObject = json.loads(row[0])  # as ``put`` stored it
        return response

    def put(self, key: str, model: str, response: JSONObject) -> None:
        text = json.dumps(response, ensure_ascii=False)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, model, response) VALUES (?, ?, ?)",
                (key, model, text),
            )
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
