"""The model port (``Responder``) and its implementations: scripted, the demo and Pydantic AI.

A responder turns a conversation into a stream of UI message chunks; the HTTP
server and workers run it and store what it streams.
"""

from chatledger.adapters.responders.scripted import (
    DemoResponder,
    Responder,
    ResponderRequest,
    ScriptedResponder,
    demo_responder,
)

__all__ = ["DemoResponder", "Responder", "ResponderRequest", "ScriptedResponder", "demo_responder"]
