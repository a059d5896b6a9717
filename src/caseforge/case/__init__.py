"""Cases and suites: the model, loading with positions, validate, split and retire."""

__all__ = ["load", "model", "neardup", "positions", "retire", "split", "suite", "validate"]
