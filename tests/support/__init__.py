"""Shared helpers for chatledger's tests (not part of the installed package)."""
