"""The HTTP server: a Starlette app that speaks what the AI SDK's ``useChat`` sends, plus JSON endpoints.

Parses requests, calls the store, frames answers (SSE or JSON). Imports
``store`` and ``responders``, never ``persistence``.
"""
