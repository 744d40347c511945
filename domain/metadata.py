"""Message metadata deep-merge, exactly as the AI SDK's ``mergeObjects`` does it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["MetadataMergeError", "merge_metadata"]

_SKIPPED_KEYS = frozenset({"__proto__", "constructor", "prototype"})


class MetadataMergeError(ValueError):
    """The SDK would throw: metadata cannot be merged into a non-object value."""


def merge_metadata(existing: Any, update: Any) -> Any:
    """Merge ``update`` into ``existing`` (SDK ``updateMessageMetadata``).

    A ``None`` update changes nothing; with no existing metadata the update is
    taken as it is; otherwise plain objects merge key by key, recursively, and
    anything else replaces.
    """
    if update is None:
        return existing
    if existing is None:
        return update
    return _merge_objects(existing, update)


def _merge_objects(base: Any, overrides: Any) -> Any:
    result = _spread(base)
    for key, value in _own_entries(overrides):
        if key in _SKIPPED_KEYS:
            continue
        if not isinstance(base, (dict, list)):
            # JavaScript's `key in base` throws on a primitive base.
            raise MetadataMergeError(
                f"cannot merge metadata key {key!r} into existing metadata of type "
                f"{type(base).__name__}"
            )
        base_value = _get(base, key)
        if isinstance(value, dict) and isinstance(base_value, dict):
            result[key] = _merge_objects(base_value, value)
        else:
            result[key] = value
    return result


def _spread(value: Any) -> dict[str, Any]:
    """JavaScript ``{...value}`` on a JSON value."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, str)):
        return {str(index): item for index, item in enumerate(value)}
    return {}


def _own_entries(value: Any) -> Iterator[tuple[str, Any]]:
    """JavaScript ``for (key in value)`` over own keys, with their values."""
    if isinstance(value, dict):
        yield from value.items()
    elif isinstance(value, (list, str)):
        for index, item in enumerate(value):
            yield str(index), item


def _get(base: dict[str, Any] | list[Any], key: str) -> Any:
    if isinstance(base, dict):
        return base.get(key)
    if key.isdigit() and int(key) < len(base):
        return base[int(key)]
    return None
