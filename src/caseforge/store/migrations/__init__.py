"""Alembic migrations that own the store's schema (see ``store/migrate.py``)."""
