"""The HTTP server, at its import path from before 0.2.

Use ``chatledger.adapters.http.app``; this path stays for compatibility.
"""

from chatledger.adapters.http.app import *  # noqa: F403
from chatledger.adapters.http.app import __all__  # noqa: F401
