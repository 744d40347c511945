"""The OpenAI Agents SDK session, at its import path from before 0.2.

Use ``chatledger.adapters.frameworks.openai_agents``; this path stays for compatibility.
"""

from chatledger.adapters.frameworks.openai_agents import *  # noqa: F403
from chatledger.adapters.frameworks.openai_agents import __all__  # noqa: F401
