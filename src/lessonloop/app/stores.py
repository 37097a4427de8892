"""How the use cases open the store.

Every use case opens its own short-lived connection, so concurrent callers (the MCP server runs
tools on worker threads) share none: readers keep one read-only connection per thread and root
(SQLite's page cache belongs to the connection), writers are serialized by a process-wide lock,
since admission renders the Markdown views after its commit and two writers would render a
stale one.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .. import paths
from ..errors import NotFoundError

if TYPE_CHECKING:
    from ..store.db import Store

_WRITE_LOCK = threading.Lock()  # one writer at a time: admission renders views after commit
_READERS = threading.local()  # per thread: the read-only store of each root, kept open


@contextlib.contextmanager
def reading(root: Path) -> Iterator[Store | None]:
    """The store under ``root`` opened read-only, or None while it holds no data yet.

    The connection is kept for the next call in the same thread (a long-lived process such as
    the MCP server): a cold page cache makes every search read the index again. In autocommit
    mode it sees every commit; a database file that was replaced gets a new connection.
    """
    from ..store import open_store

    path = paths.db_path(root)
    try:
        inode = os.stat(path).st_ino
    except OSError:
        yield None
        return
    stores = _READERS.__dict__.setdefault("stores", {})
    kept = stores.get(str(path))
    if kept is None or kept[1] != inode:
        if kept is not None:
            kept[0].close()
        try:
            kept = stores[str(path)] = (open_store(root, readonly=True), inode)
        except NotFoundError:
            yield None
            return
    yield kept[0]


@contextlib.contextmanager
def writing(root: Path | None = None, *, exclusive: bool = True) -> Iterator[Store]:
    """The store under ``root`` opened for writing. ``exclusive`` holds the write lock for the
    whole block (memory writes, whose views are rendered after commit); otherwise only while
    the home is created and migrated."""
    from ..store import open_store

    if exclusive:
        with _WRITE_LOCK, open_store(root) as store:
            yield store
        return
    with _WRITE_LOCK:
        store = open_store(root)
    with store:
        yield store
