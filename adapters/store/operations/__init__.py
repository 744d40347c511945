"""What operators run (the CLI's commands, the operator routes), off the chat surface.

The modules holding each concept: ``verify``, ``integrity`` (hash chains,
seals), ``export``, ``erasure`` and ``otel``.
"""

__all__: list[str] = []
