"""A LangGraph order-status agent for the ``langgraph-orders`` example suite."""
