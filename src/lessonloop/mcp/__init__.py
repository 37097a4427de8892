"""lessonloop over the Model Context Protocol: ``lessonloop mcp`` serves memories, scenarios,
runs, playbooks and the task judge to any MCP client over stdio (see ``server``).

The SDK is an optional extra (``pip install 'lessonloop[mcp]'``) and is imported only when the
server starts, so importing this package costs nothing.
"""
