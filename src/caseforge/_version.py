"""The installed caseforge version, importable from any layer. The one place it is written:
pyproject.toml reads it ([tool.hatch.version]), so the package metadata agrees."""

__version__ = "0.2.0"
