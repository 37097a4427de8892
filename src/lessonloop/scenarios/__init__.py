"""Scenarios: the base interface, the registry and the built-in games."""
