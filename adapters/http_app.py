"""The HTTP server, at the import path documented before 0.2: use ``chatledger.adapters.http.app``."""

from chatledger.adapters.http.app import *  # noqa: F403
from chatledger.adapters.http.app import __all__  # noqa: F401
