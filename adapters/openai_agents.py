"""The OpenAI Agents SDK session, at the import path documented before 0.2: use ``chatledger.adapters.frameworks.openai_agents``."""

from chatledger.adapters.frameworks.openai_agents import *  # noqa: F403
from chatledger.adapters.frameworks.openai_agents import __all__  # noqa: F401
