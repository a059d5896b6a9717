"""Cases and suites: the model, loading with positions, validate, split and retire."""
