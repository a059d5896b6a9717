"""caseforge: an agent's golden dataset as code."""

__version__ = "0.1.0"
