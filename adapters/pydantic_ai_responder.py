"""The Pydantic AI responder, at its import path from before 0.2.

Use ``chatledger.adapters.responders.pydantic_ai``; this path stays for compatibility.
"""

from chatledger.adapters.responders.pydantic_ai import *  # noqa: F403
from chatledger.adapters.responders.pydantic_ai import __all__  # noqa: F401
