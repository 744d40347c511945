"""The shell around the domain, grouped by role.

* ``bootstrap`` — the composition root: a URL becomes a configured store.
* ``store/`` — the use cases (``ConversationStore``): load, decide, save.
* ``persistence/`` — eventsourcing, SQLite and PostgreSQL: the only package
  that imports database drivers.
* ``http/`` — the Starlette server (useChat and JSON endpoints).
* ``responders/`` — the model port and its implementations.
* ``frameworks/`` — other frameworks' stores over ``ConversationStore``.
* ``mcp/`` — the store's tools for MCP clients (``chatledger mcp``).
* ``cli/`` — the ``chatledger`` command.

Which may import which is guarded by ``tests/unit/test_layering.py``:
``persistence`` imports nothing else from here; ``store`` imports
``persistence`` only; ``responders`` imports ``store``; ``http``,
``frameworks`` and ``cli`` import ``store`` and ``responders`` (``cli`` also
``http`` and ``frameworks``), never ``persistence``.
"""
