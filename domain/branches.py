"""The tree of a conversation's messages: edits and regenerations make sibling branches.

A cut (``MessagesCut``: an edit or a regeneration) hides messages from the view
but keeps them; the message that follows the cut becomes a *sibling* of the
first message cut (both follow the same parent). The conversation's view is
one path of that tree, from the first message to the *active leaf*;
``BranchSwitched`` moves the view to another path.

Each message of the tree is a *node* with a key: its message id, or, when an
edit reused an id already in the tree, ``"<id>~<n>"`` (n = 2, 3, ...), so
every node has a key of its own. Keys are given in the order the fold meets
the messages, so every replay of the log gives the same keys.

A conversation that was never cut has no tree (``ConversationState.branches``
is None): its state and snapshot are exactly those of before branches, and
each message is its own only branch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chatledger.domain.errors import InvalidMessageError

__all__ = [
    "ROOT",
    "Branch",
    "BranchTree",
    "Siblings",
    "decide_switch",
    "path_messages",
    "siblings_in_view",
    "siblings_of",
]

ROOT = ""
"""The parent key of a conversation's first messages."""


@dataclass(frozen=True)
class Branch:
    """One sibling: a message that follows the same parent as the others."""

    key: str
    """The message's node key (its id, unless the id was reused: ``id~n``)."""
    message_id: str
    """The message's id."""
    role: str
    """``user``, ``assistant`` or ``system``."""
    active: bool
    """Whether the message is on the conversation's active path."""
    leaf: str
    """The node key the view ends at after switching to this branch (its latest path down)."""

    def to_json(self) -> dict[str, Any]:
        """As the HTTP routes give it."""
        return {
            "key": self.key,
            "messageId": self.message_id,
            "role": self.role,
            "active": self.active,
            "leaf": self.leaf,
        }


@dataclass(frozen=True)
class Siblings:
    """A message and its siblings, in the order they were written (``< index/total >``)."""

    key: str
    """The node key of the message asked about."""
    index: int
    """Its position among its siblings, from 1."""
    branches: list[Branch]
    """Every sibling, itself included."""

    @property
    def total(self) -> int:
        """How many siblings (1: the message has no other branch)."""
        return len(self.branches)

    def to_json(self) -> dict[str, Any]:
        """As the HTTP routes give it."""
        return {
            "key": self.key,
            "index": self.index,
            "total": self.total,
            "branches": [branch.to_json() for branch in self.branches],
        }


@dataclass
class BranchTree:
    """Every message a conversation ever showed, as a tree; ``path`` is the view's keys."""

    parents: dict[str, str] = field(default_factory=dict)
    """Node key -> the key of the message it follows (``ROOT`` for a first message)."""
    children: dict[str, list[str]] = field(default_factory=dict)
    """Parent key -> its children's keys, in the order they were written."""
    ids: dict[str, str] = field(default_factory=dict)
    """Node key -> message id."""
    roles: dict[str, str] = field(default_factory=dict)
    """Node key -> role."""
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Node key -> the message, for the messages off the active path (as they were when they left it)."""
    path: list[str] = field(default_factory=list)
    """The keys of the view's messages, in order (the active path)."""
    chosen: dict[str, str] = field(default_factory=dict)
    """Parent key -> the child last on the active path (a switch to a branch goes down these)."""

    @classmethod
    def of(cls, messages: list[dict[str, Any]]) -> BranchTree:
        """The tree of a view that was never cut: one path."""
        tree = cls()
        for message in messages:
            tree.appended(message)
        return tree

    # -- changes (the fold calls these) ---------------------------------------------

    def appended(self, message: Mapping[str, Any]) -> None:
        """A message joined the view, after the last one."""
        message_id = str(message["id"])
        key, n = message_id, 1
        while key in self.parents:
            n += 1
            key = f"{message_id}~{n}"
        parent = self.path[-1] if self.path else ROOT
        self.parents[key] = parent
        self.children.setdefault(parent, []).append(key)
        self.ids[key] = message_id
        self.roles[key] = str(message.get("role"))
        self.chosen[parent] = key
        self.path.append(key)

    def renamed(self, message: Mapping[str, Any]) -> None:
        """The last message of the view took another id (a stream's ``start``): its key follows."""
        old = self.path[-1]
        if self.ids[old] == message["id"]:
            return
        parent = self.parents.pop(old)
        siblings = self.children[parent]
        del self.ids[old], self.roles[old], siblings[siblings.index(old)], self.path[-1]
        self.appended(message)

    def cut(self, index: int, messages: list[dict[str, Any]]) -> None:
        """The view's messages from ``index`` on left it (a cut): kept off the path."""
        for key, message in zip(self.path[index:], messages[index:], strict=True):
            self.stored[key] = message
        del self.path[index:]

    def switch(self, key: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The view after switching to the branch of ``key`` (down its latest path to a leaf)."""
        new_path = self.path_to(self.leaf_of(key))
        kept = 0
        while kept < min(len(new_path), len(self.path)) and new_path[kept] == self.path[kept]:
            kept += 1
        for old_key, message in zip(self.path[kept:], messages[kept:], strict=True):
            self.stored[old_key] = message
        view = messages[:kept] + [self.stored.pop(k) for k in new_path[kept:]]
        for node in new_path:
            self.chosen[self.parents[node]] = node
        self.path = new_path
        return view

    # -- reads ------------------------------------------------------------------------

    def key_of(self, ref: str) -> str:
        """The node key named by ``ref``: a key as listed (a message id is the key of its first node)."""
        if ref in self.parents:
            return ref
        raise InvalidMessageError(
            "no message with this id or branch key in the conversation (list the branches "
            "of a message of the view to see the keys)",
            message_id=ref,
        )

    def path_to(self, key: str) -> list[str]:
        """The keys from the first message to ``key``, in order."""
        path = [key]
        while self.parents[path[-1]] != ROOT:
            path.append(self.parents[path[-1]])
        return path[::-1]

    def leaf_of(self, key: str) -> str:
        """The leaf reached from ``key`` going down the children last on the active path."""
        while key in self.children:
            key = self.chosen.get(key) or self.children[key][-1]
        return key

    def messages_to(self, key: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages of the path ending at ``key`` (the view's own where the path shares them)."""
        on_view = dict(zip(self.path, messages, strict=True))
        return [on_view[k] if k in on_view else self.stored[k] for k in self.path_to(key)]

    def siblings(self, key: str) -> Siblings:
        """``key`` and its siblings."""
        keys = self.children[self.parents[key]]
        on_path = set(self.path)
        branches = [
            Branch(k, self.ids[k], self.roles[k], k in on_path, self.leaf_of(k)) for k in keys
        ]
        return Siblings(key, keys.index(key) + 1, branches)

    # -- snapshots ----------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The tree as JSON (the view's own messages are the state's)."""
        return {
            "parents": self.parents,
            "children": self.children,
            "ids": self.ids,
            "roles": self.roles,
            "stored": self.stored,
            "path": self.path,
            "chosen": self.chosen,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BranchTree:
        """Rebuild a tree from ``to_json()`` output (which it then owns)."""
        return cls(
            dict(data["parents"]),
            {k: list(v) for k, v in data["children"].items()},
            dict(data["ids"]),
            dict(data["roles"]),
            dict(data["stored"]),
            list(data["path"]),
            dict(data["chosen"]),
        )


def siblings_in_view(tree: BranchTree | None, messages: list[dict[str, Any]]) -> list[Siblings]:
    """For each message of the view, its siblings (one branch each when the conversation has no tree)."""
    if tree is None:
        return [
            Siblings(m["id"], 1, [Branch(m["id"], m["id"], m["role"], True, m["id"])])
            for m in messages
        ]
    return [tree.siblings(key) for key in tree.path]


def decide_switch(tree: BranchTree | None, to: str) -> tuple[str, str | None] | None:
    """``(new leaf, previous leaf)`` of a switch to the branch of ``to``; None: already shown.

    ``to`` is a node key (or message id) of the tree; the view ends at that
    branch's latest leaf. A conversation never cut has one branch per message.
    """
    if tree is None:
        raise InvalidMessageError(
            "this conversation has no other branch to switch to (edit or regenerate a "
            "message to make one)",
            message_id=to,
        )
    key = tree.key_of(to)
    leaf = tree.leaf_of(key)
    previous = tree.path[-1] if tree.path else None
    if leaf == previous:
        return None
    return leaf, previous


def path_messages(
    tree: BranchTree | None, messages: list[dict[str, Any]], leaf: str
) -> list[dict[str, Any]]:
    """The messages of the path from the first message to ``leaf`` (a node key or message id)."""
    if tree is None:
        index = next((i for i, m in enumerate(messages) if m["id"] == leaf), None)
        if index is None:
            raise InvalidMessageError(
                "no message with this id in the conversation", message_id=leaf
            )
        return messages[: index + 1]
    return tree.messages_to(tree.key_of(leaf), messages)


def siblings_of(tree: BranchTree | None, messages: list[dict[str, Any]], ref: str) -> Siblings:
    """The siblings of message ``ref`` (a node key or message id), itself included."""
    if tree is None:
        path_messages(tree, messages, ref)  # refuses an unknown id
        message = next(m for m in messages if m["id"] == ref)
        return Siblings(ref, 1, [Branch(ref, ref, message["role"], True, messages[-1]["id"])])
    return tree.siblings(tree.key_of(ref))
