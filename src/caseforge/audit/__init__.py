"""Audits: criteria loosened without a reason (git history), private data leaked into the repo."""

__all__ = ["criteria", "leaks", "privacy", "sources"]
