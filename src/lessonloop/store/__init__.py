"""The SQLite store: connection handling, migrations and one module per table group."""

from .db import Store, open_store

__all__ = ["Store", "open_store"]
