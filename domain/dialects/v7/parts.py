"""The UIMessage parts AI SDK 7 adds (``validateUIMessages`` of ``ai@7``), for ``parts.check_message``."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Final, Literal

from pydantic import Field

from chatledger.domain._wire import OptProviderMetadata, WireModel
from chatledger.domain.dialects.v7.chunk_models import SteeringFilePart, SteeringTextPart

__all__ = ["PART_MODELS", "CustomPart", "ReasoningFilePart", "SteeringMessagePart"]


class CustomPart(WireModel):
    """Provider-specific content (``kind``: ``<provider>.<type>``)."""

    type: Literal["custom"]
    """The part type."""
    kind: str
    """What the content is."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the content."""


class ReasoningFilePart(WireModel):
    """A file produced while reasoning."""

    type: Literal["reasoning-file"]
    """The part type."""
    media_type: str
    """IANA media type of the file."""
    url: str
    """URL or data URL of the file."""
    provider_metadata: OptProviderMetadata = None
    """Provider metadata of the file."""


class SteeringMessagePart(WireModel):
    """A user message the running answer took at a step boundary."""

    type: Literal["steering-message"]
    """The part type."""
    id: str
    """Id of the steering message."""
    parts: list[Annotated[SteeringTextPart | SteeringFilePart, Field(discriminator="type")]]
    """Its text and file parts."""


PART_MODELS: Final[Mapping[str, type[WireModel]]] = MappingProxyType(
    {
        "custom": CustomPart,
        "reasoning-file": ReasoningFilePart,
        "steering-message": SteeringMessagePart,
    }
)
"""Part type -> model, for the part types only v7 has."""
