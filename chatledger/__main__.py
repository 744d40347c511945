"""``python -m chatledger``: the same command line as the ``chatledger`` script."""

from chatledger.adapters.cli.commands import main

raise SystemExit(main())
