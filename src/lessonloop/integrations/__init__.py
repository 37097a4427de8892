"""Integrations with agents that lessonloop plugs into."""
