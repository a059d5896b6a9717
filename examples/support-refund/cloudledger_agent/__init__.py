"""Offline reference agents of the support-refund suite (CloudLedger / 云簿 support).

``agent.run`` is a rule-based stand-in for an LLM support agent, in two versions selected
by ``ctx.config["version"]``: ``v1`` with the weaknesses found in the error analysis and
``v2`` that follows the refund policy. ``tools`` holds the three tools over the trial's
SQLite database; ``workspace`` prepares that database per trial and reads back the refund
requests a trial left behind.

The package is named after the product so that it cannot clash with the packages of other
suites (the runner puts each suite folder on ``sys.path``).
"""
