"""The Pydantic AI conversation store, at its import path from before 0.2.

Use ``chatledger.adapters.frameworks.pydantic_ai``; this path stays for compatibility.
"""

from chatledger.adapters.frameworks.pydantic_ai import *  # noqa: F403
from chatledger.adapters.frameworks.pydantic_ai import __all__  # noqa: F401
