"""Read models built from the conversation event log (they import ``domain``, never ``adapters``)."""
