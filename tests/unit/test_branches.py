"""The branch tree (``chatledger.domain.branches``): keys, switches, snapshots, a fresh fold agrees."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from chatledger.domain.branches import BranchTree
from chatledger.domain.conversation import ConversationState


def _m(mid: str, role: str = "user", text: str = "") -> dict[str, Any]:
    return {"id": mid, "role": role, "parts": [{"type": "text", "text": text or mid}]}


def _state() -> ConversationState:
    state = ConversationState("t", "c")
    state.append_message(_m("u1", text="q"))
    state.append_message(_m("a1", "assistant"))
    state.cut_from(1)  # regenerate
    state.append_message(_m("a2", "assistant"))
    state.cut_from(0)  # edit, same id
    state.append_message(_m("u1", text="q edited"))
    state.append_message(_m("a3", "assistant"))
    return state


def test_a_reused_id_gets_a_key_of_its_own() -> None:
    tree = _state().branches
    assert tree is not None
    assert tree.path == ["u1~2", "a3"]
    assert tree.children[""] == ["u1", "u1~2"]
    assert tree.children["u1"] == ["a1", "a2"]
    assert tree.leaf_of("u1") == "a2"


def test_a_switch_keeps_the_branch_it_leaves() -> None:
    state = _state()
    state.switch_to("a1")
    assert [m["id"] for m in state.messages] == ["u1", "a1"]
    assert state.messages[0]["parts"][0]["text"] == "q"
    state.switch_to("u1~2")
    assert [m["parts"][0]["text"] for m in state.messages] == ["q edited", "a3"]
    state.switch_to("u1")
    assert [m["id"] for m in state.messages] == ["u1", "a1"]  # the path last shown under u1


def test_the_snapshot_keeps_the_tree_and_an_uncut_one_is_unchanged() -> None:
    state = _state()
    again = ConversationState.from_json(json.loads(json.dumps(state.to_json())))
    assert again.branches == state.branches
    again.switch_to("a2")
    assert [m["id"] for m in again.messages] == ["u1", "a2"]
    plain = ConversationState("t", "c")
    plain.append_message(_m("u1"))
    assert "branches" not in plain.to_json()
    assert ConversationState.from_json(plain.to_json()).branches is None


def test_a_stream_renaming_its_message_renames_the_node() -> None:
    tree = BranchTree.of([_m("u1"), _m("msg_x", "assistant")])
    tree.renamed(_m("a1", "assistant"))
    assert tree.path == ["u1", "a1"]
    assert tree.children["u1"] == ["a1"]
    assert "msg_x" not in tree.ids


@st.composite
def _steps(draw: st.DrawFn) -> list[tuple[str, int]]:
    kinds = st.sampled_from(["append", "append", "cut", "switch"])
    return draw(st.lists(st.tuples(kinds, st.integers(0, 50)), max_size=40))


@settings(max_examples=150, deadline=None)
@given(_steps(), st.sampled_from([["u", "a"], ["m"]]))
def test_every_message_stays_reachable_and_the_view_is_one_path(
    steps: list[tuple[str, int]], ids: list[str]
) -> None:
    """Random appends, cuts and switches: no message is lost, the view is a root path, snapshots agree."""
    state = ConversationState("t", "c")
    written: list[str] = []  # the text of every message appended, in order (each unique)
    for n, (kind, pick) in enumerate(steps):
        if kind == "append":
            text = f"message {n}"
            state.append_message(_m(f"{ids[n % len(ids)]}{n % 3}", text=text))
            written.append(text)
        elif kind == "cut" and state.messages:
            state.cut_from(pick % len(state.messages))
        elif kind == "switch" and state.branches is not None:
            keys = sorted(state.branches.parents)
            state.switch_to(keys[pick % len(keys)])
        tree = state.branches
        if tree is None:
            continue
        assert len(tree.path) == len(state.messages)
        assert [tree.ids[k] for k in tree.path] == [m["id"] for m in state.messages]
        for before, key in zip(["", *tree.path], tree.path, strict=False):
            assert tree.parents[key] == before  # the view is one path from the root
        texts = sorted(
            tree.messages_to(key, state.messages)[-1]["parts"][0]["text"] for key in tree.parents
        )
        assert texts == sorted(written)  # every message ever shown is still in the tree
        again = ConversationState.from_json(json.loads(json.dumps(state.to_json())))
        assert again.branches == tree and again.messages == state.messages
