"""The Pydantic AI conversation store, at the import path documented before 0.2: use ``chatledger.adapters.frameworks.pydantic_ai``."""

from chatledger.adapters.frameworks.pydantic_ai import *  # noqa: F403
from chatledger.adapters.frameworks.pydantic_ai import __all__  # noqa: F401
