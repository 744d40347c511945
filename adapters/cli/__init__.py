"""The ``chatledger`` command line (argparse): serve, demo, show, ingest, audit, convert, rebuild, verify...

``commands`` holds the parser and the registry; each command family has a
module named after it (``conversation``: show, audit, convert; ``erasure``:
erase, retain; ...) with ``add(commands)`` and a function per command;
``options`` and ``common`` hold what they share; ``render`` prints
conversations and reports; ``chunk_files`` reads JSON Lines and SSE captures.
"""

from chatledger.adapters.cli.commands import main

__all__ = ["main"]
