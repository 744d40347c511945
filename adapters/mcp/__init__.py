"""``chatledger mcp``: the store's conversations, approvals and checks as MCP tools (the official SDK).

* ``tools`` — what each tool does, over the store's public API (``StoreTools``);
* ``server`` — the tools registered with the SDK's ``MCPServer`` (``build_server``);
* ``http`` — the streamable HTTP app behind ``serve``'s bearer tokens (``mcp_http_app``).

The command itself is ``chatledger.adapters.cli.mcp``.
"""
