"""Reading a UI-message stream sent as a request body: SSE ``data:`` frames, piece by piece.

The AI SDK's ``toUIMessageStreamResponse()`` frames each chunk as
``data: <chunk JSON>`` and a blank line, and ends with ``data: [DONE]``.
``SSEDecoder`` takes the body as it arrives (pieces cut anywhere, even inside
a line) and gives the ``data`` of each complete event; comments (``:``) and
the other fields (``event``, ``id``, ``retry``) are skipped, several ``data``
lines of one event are joined with newlines, as the SSE standard says.
"""

from __future__ import annotations

__all__ = ["DONE_DATA", "EventTooLargeError", "SSEDecoder"]

DONE_DATA = "[DONE]"
"""The data of the event that ends a UI-message stream."""


class EventTooLargeError(ValueError):
    """One event of the body is longer than the decoder takes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"an event of the body is over {limit} bytes")
        self.limit = limit


class SSEDecoder:
    """Splits an SSE body into event data; ``done`` once ``data: [DONE]`` arrived.

    An event (or a line) longer than ``max_event_bytes`` raises
    ``EventTooLargeError``: the body is read in pieces and never held whole.
    """

    def __init__(self, max_event_bytes: int) -> None:
        self.max_event_bytes = max_event_bytes
        self.done = False
        """Whether the stream's ``[DONE]`` arrived (what follows it is ignored)."""
        self._partial = b""
        self._data: list[bytes] = []
        self._size = 0

    def feed(self, piece: bytes) -> list[str]:
        """The data of the events ``piece`` completes, in order (up to ``[DONE]``)."""
        if self.done:
            return []
        buffer = self._partial + piece if self._partial else piece
        lines = buffer.split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > self.max_event_bytes:
            raise EventTooLargeError(self.max_event_bytes)
        events: list[str] = []
        for line in lines:
            if self._line(line.removesuffix(b"\r"), events):
                break
        return events

    def end(self) -> list[str]:
        """The data of an event the body left without its closing blank line, if any."""
        events: list[str] = []
        if not self.done:
            if self._partial:
                self._line(self._partial.removesuffix(b"\r"), events)
                self._partial = b""
            self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[str]) -> bool:
        """Take one line; True once the stream is done."""
        if not line:
            if self._data:
                data = b"\n".join(self._data).decode("utf-8", errors="replace")
                self._data, self._size = [], 0
                if data == DONE_DATA:
                    self.done = True
                    self._partial = b""
                    return True
                events.append(data)
            return False
        if line.startswith(b":"):
            return False  # a comment (a keep-alive)
        name, _, value = line.partition(b":")
        if name == b"data":
            value = value[1:] if value.startswith(b" ") else value
            self._size += len(value) + 1
            if self._size > self.max_event_bytes:
                raise EventTooLargeError(self.max_event_bytes)
            self._data.append(value)
        return False
