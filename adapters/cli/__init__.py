"""The ``chatledger`` command line (argparse): serve, demo, show, ingest, audit, convert, rebuild, verify...

``commands`` holds the commands; ``render`` prints conversations and reports;
``chunk_files`` reads JSON Lines and SSE captures.
"""

from chatledger.adapters.cli.commands import main

__all__ = ["main"]
