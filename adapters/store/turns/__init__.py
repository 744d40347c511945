"""Taking a turn, protocol-neutral: the ``Turns`` service, the ``TurnRunner`` and the continuation policy.

A transport (the HTTP app's ``POST /api/chat``, its WebSocket, the worker)
parses its request, asks ``Turns`` (``service``) to record it and open the
answer's stream, starts a ``TurnRunner`` (``runner``) on the ``Turn`` and
frames what the runner's ``Outbox`` (``outbox``) holds. ``responder`` is the
model port, ``steering`` the wait for a message sent mid-answer and
``continuations`` who runs a requested continuation. Nothing in this package
knows HTTP. (Import from the modules: this package loads nothing, so the
responder port is light to import.)
"""

__all__: list[str] = []
