"""Offline reference agent for the ac-clarifier suite: a rule-based stand-in for an LLM reviewer.

It reads a messy feature card (title, description, chat fragments, numbered ACs) and
returns the four blocks `goal`, `scope_in`, `scope_out` and `ac_flags`. Two configurations:

- ``checklist`` reviews AC by AC, each against the description and against the other ACs;
- ``holistic`` reads the card as a whole and carries the known failure: an AC it has
  already flagged ``conflict`` is never checked against the description again, so its
  ``mismatch`` is dropped.

The agent only ever sees the case's ``input``; it never reads a case file.
"""

from clarifier_agent.agent import run

__all__ = ["run"]
