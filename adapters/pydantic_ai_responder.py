"""The Pydantic AI responder, at the import path documented before 0.2: use ``chatledger.adapters.responders.pydantic_ai``."""

from chatledger.adapters.responders.pydantic_ai import *  # noqa: F403
from chatledger.adapters.responders.pydantic_ai import __all__  # noqa: F401
