"""The installed chatledger version (the package's metadata), for ``chatledger --version`` and ``/health``."""

from __future__ import annotations

from importlib import metadata

__all__ = ["installed_version"]


def installed_version() -> str:
    """The version pip installed (``unknown`` when run from a tree that was never installed)."""
    try:
        return metadata.version("chatledger")
    except metadata.PackageNotFoundError:
        return "unknown"
