"""Other tools' tests in, caseforge runs out: one module per format, on a shared framework.

An importer (``caseforge import FORMAT SOURCE --out SUITE``) reads its source into one case
per item and leaves the rest to the framework:

- ``records``: reading JSON, JSONL, CSV, Parquet and saved Hugging Face datasets, each
  record with where it is (``line 4``, ``row 3``) for messages and the report;
- ``ids``: slugified, deduplicated case ids;
- ``report``: the import report, an ``Item`` per source item saying what it became or why
  it became nothing, printed and written as ``SUITE/IMPORT.md``;
- ``suite``: ``SuiteWriter``, which gives each case its id, marks it as this import's own
  (``provenance.imported_from``), validates it, and writes the suite all or nothing; a
  re-import rewrites only the cases it made.

promptfoo's is several, one concept each: ``promptfoo`` (the import), ``promptfoo_config``
(its files, prompts, providers), ``promptfoo_tests`` (test sources, CSV columns),
``promptfoo_cases`` (a test as cases), ``promptfoo_asserts`` (the assertion table) with
``promptfoo_mapping`` (its vocabulary), ``promptfoo_reported`` (what has no check),
``promptfoo_scripts`` (code assertions, copied files) and ``promptfoo_transform``,
``jsregex`` and ``nunjucks`` (JavaScript and Nunjucks read in Python),
``promptfoo_agent`` (the agent stub a new suite gets), and the exporters
``promptfoo_export`` and ``promptfoo_results``.

A new importer is a module here with a function ``(request, dry_run) -> ImportReport``
that makes a ``SuiteWriter``, calls ``report.item(...)`` and ``writer.add(...)`` once per
source item (``item.map`` for how a part was mapped, ``item.note`` for what the case does
not hold, ``item.skip`` for an item that becomes no case), and returns ``writer.write(dry_run)``;
plus a command in ``cli/interop_cmd.py``. ``inspect_dataset`` is the example to copy.

An exporter (``caseforge export FORMAT RUN --out FILE``) reads the typed ``RunReport``
(``report.build.load_report`` with ``raw=True``), never the store's tables.
Heavy dependencies (pyarrow, inspect_ai) are imported inside the function that needs them,
through ``records.optional``, which names the extra to install when one is missing.
"""
