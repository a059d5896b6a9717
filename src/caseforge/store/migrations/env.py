"""Alembic environment: caseforge always passes an open connection in ``config.attributes``."""

from __future__ import annotations

from alembic import context

from caseforge.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # `alembic revision --autogenerate` from the command line
    from sqlalchemy import create_engine

    url = context.config.get_main_option("sqlalchemy.url") or "sqlite:///:memory:"
    with create_engine(url).connect() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
