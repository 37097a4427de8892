"""Faults a user meets outside a happy path, marked ``reliability`` (``pytest -m reliability``
runs them alone; the default run, and so .ci/run, includes them): kill -9 at random points of
run, improve and memorize, then exactly-once checks; the same run id started twice at once and
killed before its row existed (test_run_start); a small tmpfs filled during a run, a memory
add and a memorize (test_full_disk); a read-only home; twenty hook writers during a run.

Also marked ``reliability`` where they live beside their module: the kill -9 and Ctrl-C tests
of tests/loop/test_runner.py, malformed JSON-RPC to the MCP server (tests/mcp/test_transport.py),
twenty concurrent hook processes (tests/memory/test_hooks.py) and a read-only database
(tests/cli/test_cli.py)."""
