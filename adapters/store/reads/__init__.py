"""The read side: one ``Reader`` for a conversation's messages, timeline and status, and live follows."""

from chatledger.adapters.store.reads.follow import FollowedChunk
from chatledger.adapters.store.reads.follow_async import AsyncFollower
from chatledger.adapters.store.reads.reader import Reader
from chatledger.adapters.store.reads.shown import shown, shown_messages

__all__ = ["AsyncFollower", "FollowedChunk", "Reader", "shown", "shown_messages"]
