"""The reference test agent of the ``test-agent`` suite: ``probe_agent.agent:run``."""
