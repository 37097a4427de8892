"""lessonloop: a local-first harness that makes AI agents better with every run and session."""

__version__ = "0.1.0"
