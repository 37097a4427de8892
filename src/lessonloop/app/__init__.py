"""The use cases, written once. The CLI and the MCP server (and any adapter to come) call these
functions and turn their results and errors into their own words: a ``UsageError`` names the
argument at fault by its field (``matches``), which the CLI calls ``--matches`` and the MCP
server the tool argument. Modules here import the engine lazily, inside each function, so an
adapter that imports them pays only for what it calls."""
