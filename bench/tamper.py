"""Tampering, kind by kind: what ``chatledger verify`` says of each, with and without the seal key and a witness.

A script, not a test (nothing passes or fails): for each backend and each of
the 30 kinds below, a fresh store is filled the same way, sealed three times
with a witness file, tampered with plain SQL (``tests/integration/tamper.py``,
the way an intruder with database access would), and checked by the real
command three ways:

* ``plain``: ``chatledger verify`` (no key: chains, log, snapshots, read models);
* ``key``: ``verify --seal-key-file K`` (seals' signatures checked too);
* ``all``: ``verify --seal-key-file K --witness W`` and ``--signed-writes``
  when the store's writers signed (every kind but ``extended-unsigned-store``).

Each cell is the exit code and the problems' kinds (``chain:changed``,
``seal:forged``, ``read-model``, ...). The fill: ``done`` (the demo: an
approval denied with a reason, 14-16 events), ``paused`` (awaiting approval)
and ``done`` in tenant ``other``; seal 1; a message to ``paused``; seal 2; a
message to ``done``; seal 3; a message to ``other/done`` (unsealed). The
writers sign their heads with the seal key (``sign_writes``) unless the kind
says otherwise; ``data-key-deleted`` runs on a store with a cipher key.

Run: ``python bench/tamper.py [--backend sqlite|postgres|all] [--markdown]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
import traceback
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chatledger import ConversationStore  # noqa: E402
from chatledger.adapters.cli.commands import main  # noqa: E402
from chatledger.adapters.persistence.chain import split_link  # noqa: E402
from chatledger.adapters.responders import demo  # noqa: E402
from chatledger.domain.seal import SealKey  # noqa: E402
from tests.integration.conftest import _postgres_store_url, drop_schema  # noqa: E402
from tests.integration.tamper import Tamperer  # noqa: E402

SECRET = "an operator secret of thirty-two bytes"
KEY = SealKey.from_text(SECRET)


@dataclass
class Setup:
    """What a kind needs of its store: signed writes, a cipher key, a hook after the first seal."""

    signed: bool = True
    encrypted: bool = False
    after_first_seal: Callable[[Tamperer], None] | None = None


@dataclass
class Kind:
    """One tamper kind: its name, what is done, and how."""

    name: str
    what: str
    tamper: Callable[[Tamperer], None]
    setup: Setup
    expect: str = "named"
    """``named``, or why it cannot be: shown when no mode names it."""


def _approval(t: Tamperer, chat: str = "done") -> int:
    rows = t.run(
        f"SELECT originator_version, topic FROM {t.events} WHERE originator_id = ? "
        "ORDER BY originator_version",
        t.key(chat),
    )
    return next(v for v, topic in rows if topic.endswith(":ToolApprovalResponded"))


def _set(t: Tamperer, chat: str, version: int, column: str, value: Any) -> None:
    t.run(
        f"UPDATE {t.events} SET {column} = ? WHERE originator_id = ? AND originator_version = ?",
        value,
        t.key(chat),
        version,
    )


def _reorder(t: Tamperer) -> None:
    four, five = t.state("done", 4), t.state("done", 5)
    for version, (topic, state) in ((4, five), (5, four)):
        _set(t, "done", version, "topic", topic)
        _set(t, "done", version, "state", state)


def _insert(t: Tamperer, linked: bool) -> None:
    topic, state = t.state("paused", 2)
    head = t.head("paused")
    t.run(
        f"INSERT INTO {t.events} (originator_id, originator_version, topic, state) "
        "VALUES (?, ?, ?, ?)",
        t.key("paused"),
        head + 1,
        topic,
        state if linked else split_link(state)[1],
    )


def _swap_all(t: Tamperer) -> None:
    done, paused, parked = t.key("done"), t.key("paused"), t.key("parked")
    move = f"UPDATE {t.events} SET originator_id = ? WHERE originator_id = ?"
    for source, target in ((done, parked), (paused, done), (parked, paused)):
        t.run(move, target, source)


def _swap_one(t: Tamperer) -> None:
    move = (
        f"UPDATE {t.events} SET originator_id = ?, originator_version = ? "
        "WHERE originator_id = ? AND originator_version = ?"
    )
    done, paused, parked = t.key("done"), t.key("paused"), t.key("parked")
    t.run(move, parked, 0, paused, 3)
    t.run(move, paused, 3, done, 3)
    t.run(move, done, 3, parked, 0)


def _flip(t: Tamperer) -> None:
    _, state = t.state("done", 6)
    _set(t, "done", 6, "state", state[:-3] + bytes([state[-3] ^ 1]) + state[-2:])


def _delete_conversation(t: Tamperer) -> None:
    for table in (t.events, t.snapshots):
        t.run(f"DELETE FROM {table} WHERE originator_id = ?", t.key("paused"))


def _rewrite(t: Tamperer) -> None:
    t.edit("done", 2, b"old build logs", b"new build logs")
    t.relink("done", 2)


def _unchain(t: Tamperer) -> None:
    t.run("UPDATE chatledger_chain_start SET after_position = 100000")
    t.strip_links("paused")


def _delete_all_seals(t: Tamperer) -> None:
    t.run("DELETE FROM chatledger_seal_heads")
    t.run("DELETE FROM chatledger_seals")


def _extend(t: Tamperer) -> None:
    denial = _approval(t)
    t.append_copy("done", denial, demo.DENIAL_REASON.encode()[:20], b"approved after review")


def _cut_unsealed(t: Tamperer) -> None:
    head = t.head("done", "other")
    t.run(
        f"DELETE FROM {t.events} WHERE originator_id = ? AND originator_version = ?",
        t.key("done", "other"),
        head,
    )


def _cut_and_rebuild(t: Tamperer) -> None:
    _cut_unsealed(t)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["--url", t.url, "rebuild"]) == 0


def _snapshot_altered(t: Tamperer) -> None:
    rows = t.run(f"SELECT originator_id, originator_version, state FROM {t.snapshots}")
    key, version, state = next(r for r in rows if str(r[0]).replace("-", "") == t.uuid("done").hex)
    from chatledger.adapters.persistence.codec import ChunkCompressor

    codec = ChunkCompressor()
    link, inner = split_link(bytes(state))
    content = codec.decompress(inner)
    assert b"old build logs" in content
    edited = codec.compress(content.replace(b"old build logs", b"new build logs", 1))
    t.run(
        f"UPDATE {t.snapshots} SET state = ? WHERE originator_id = ? AND originator_version = ?",
        edited if link is None else bytes(state)[: len(bytes(state)) - len(inner)] + edited,
        key,
        version,
    )


def _snapshots_swapped(t: Tamperer) -> None:
    rows = t.run(f"SELECT originator_id FROM {t.snapshots} ORDER BY originator_id")
    ids = [r[0] for r in rows]
    assert len(ids) >= 2, ids
    parked = uuid.uuid4() if t.postgres else uuid.uuid4().hex
    move = f"UPDATE {t.snapshots} SET originator_id = ? WHERE originator_id = ?"
    t.run(move, parked, ids[0])
    t.run(move, ids[0], ids[1])
    t.run(move, ids[1], parked)


def _read_models(t: Tamperer) -> None:
    t.run("UPDATE chatledger_conversation_list_v2 SET title = 'nothing to see here'")
    t.run("DELETE FROM chatledger_pending_approvals")


def _bookkeeping(t: Tamperer) -> None:
    tracking = "chatledger_tracking" if t.postgres else "tracking"
    t.run(
        f"UPDATE {tracking} SET notification_id = notification_id + 5 WHERE application_name <> '__migration__'"
    )


def _data_key(t: Tamperer) -> None:
    t.run("DELETE FROM chatledger_conversation_keys WHERE originator_id = ?", t.key("paused"))


def _copy_after_first_seal(t: Tamperer) -> None:
    t.copy()


KINDS = [
    Kind(
        "content-altered",
        "an event's text changed (decompressed, edited, link kept)",
        lambda t: t.edit("done", 2, b"old build logs", b"new build logs"),
        Setup(),
    ),
    Kind(
        "type-altered",
        "an event's type (topic) changed",
        lambda t: _set(t, "done", 5, "topic", t.state("done", 5)[0].replace("Chunk", "Chunks")),
        Setup(),
    ),
    Kind(
        "denial-reason-altered",
        "the approval's denial reason rewritten",
        lambda t: t.edit(
            "done", _approval(t), demo.DENIAL_REASON.encode()[:20], b"approved after review"
        ),
        Setup(),
    ),
    Kind(
        "actor-altered",
        "who answered the approval changed",
        lambda t: t.edit("done", _approval(t), b'"actor":"user:', b'"actor":"user:x'),
        Setup(),
    ),
    Kind(
        "event-removed",
        "one event in the middle deleted",
        lambda t: t.run(
            f"DELETE FROM {t.events} WHERE originator_id = ? AND originator_version = 3",
            t.key("done"),
        ),
        Setup(),
    ),
    Kind("events-reordered", "two events' places exchanged", _reorder, Setup()),
    Kind(
        "copy-inserted",
        "an event copied to the end, its link copied too",
        lambda t: _insert(t, True),
        Setup(),
    ),
    Kind(
        "unlinked-inserted",
        "an event copied to the end without a link",
        lambda t: _insert(t, False),
        Setup(),
    ),
    Kind("conversations-swapped", "all events of two conversations exchanged", _swap_all, Setup()),
    Kind(
        "one-event-swapped", "one event moved to another conversation and back", _swap_one, Setup()
    ),
    Kind(
        "event-undecodable",
        "an event's bytes replaced by garbage",
        lambda t: _set(t, "done", 4, "state", b"\x00\xffnot an event\xfe"),
        Setup(),
    ),
    Kind("byte-flipped", "one byte of an event's compressed payload flipped", _flip, Setup()),
    Kind(
        "conversation-deleted",
        "a whole conversation (events and snapshots) deleted",
        _delete_conversation,
        Setup(),
    ),
    Kind(
        "sealed-tail-cut",
        "events after version 10 of a sealed conversation deleted",
        lambda t: t.run(
            f"DELETE FROM {t.events} WHERE originator_id = ? AND originator_version > 10",
            t.key("done"),
        ),
        Setup(),
    ),
    Kind(
        "final-denial-deleted",
        "the denial and all after it deleted",
        lambda t: t.run(
            f"DELETE FROM {t.events} WHERE originator_id = ? AND originator_version >= ?",
            t.key("done"),
            _approval(t),
        ),
        Setup(),
    ),
    Kind(
        "rewritten-relinked", "an event edited and every later link recomputed", _rewrite, Setup()
    ),
    Kind(
        "unchained",
        "the chain start moved past the log and a conversation's links stripped",
        _unchain,
        Setup(),
    ),
    Kind(
        "seal-forged",
        "a seal's body edited (conversations 3 -> 2)",
        lambda t: t.run(
            "UPDATE chatledger_seals SET body = replace(body, '\"conversations\":3', "
            "'\"conversations\":2')"
        ),
        Setup(),
    ),
    Kind(
        "one-seal-deleted",
        "seal 2 of 3 deleted",
        lambda t: t.run("DELETE FROM chatledger_seals WHERE seq = 2"),
        Setup(),
    ),
    Kind(
        "all-seals-deleted",
        "every seal and sealed head deleted",
        _delete_all_seals,
        Setup(),
        expect="only a witness or an expected seal can show seals that are gone",
    ),
    Kind(
        "rolled-back",
        "the whole store put back to its copy taken after seal 1",
        lambda t: t.roll_back(),
        Setup(after_first_seal=_copy_after_first_seal),
        expect="a consistent older copy: only a witness shows it",
    ),
    Kind(
        "extended-unsigned-store",
        "a denial copy with 'approved after review' appended with "
        "a recomputed link after the newest seal; writers do not sign",
        _extend,
        Setup(signed=False),
        expect="the chain has no secret: without signed writes an extension is valid",
    ),
    Kind("extended-signed-store", "the same, in a store whose writers sign", _extend, Setup()),
    Kind(
        "unsealed-tail-cut",
        "the newest (unsealed, signed) event of a conversation deleted",
        _cut_unsealed,
        Setup(),
        expect="the read models still hold the cut event",
    ),
    Kind(
        "unsealed-tail-cut-rebuilt",
        "the same, then 'chatledger rebuild' run (as anyone with the application can)",
        _cut_and_rebuild,
        Setup(),
        expect="after the newest seal a cut is undetectable once the read models agree",
    ),
    Kind("snapshot-altered", "a snapshot's text edited", _snapshot_altered, Setup()),
    Kind(
        "snapshots-swapped", "two conversations' snapshots exchanged", _snapshots_swapped, Setup()
    ),
    Kind(
        "read-models-altered",
        "list titles rewritten and the approvals inbox emptied",
        _read_models,
        Setup(),
    ),
    Kind("tracking-moved", "the read models' position moved 5 past the log", _bookkeeping, Setup()),
    Kind(
        "data-key-deleted",
        "an encrypted conversation's data key deleted",
        _data_key,
        Setup(encrypted=True),
    ),
]
assert len(KINDS) == 30


def fill(url: str, setup: Setup, witness: Path, cipher: str | None) -> None:
    """The fill the module docstring describes (three seals to ``witness``)."""
    sign = KEY if setup.signed else None
    with ConversationStore.open(url, sign_writes=sign, cipher_key=cipher) as store:
        demo.record_demo(store, "done")
        store.start_conversation("paused")
        store.append_message("paused", demo.USER_MESSAGE)
        store.ingest("paused", demo.first_turn_chunks())
        store.start_conversation("done", tenant="other")
        store.append_message("done", demo.USER_MESSAGE, tenant="other")
        store.operations.seal(KEY, witness=witness)
        store.operations.catch_up()
    if setup.after_first_seal is not None:
        setup.after_first_seal(Tamperer(url))
    with ConversationStore.open(url, sign_writes=sign, cipher_key=cipher) as store:
        store.append_message("paused", {**demo.USER_MESSAGE, "id": "later-1"})
        store.operations.seal(KEY, witness=witness)
        store.append_message("done", {**demo.USER_MESSAGE, "id": "later-2"})
        store.operations.seal(KEY, witness=witness)
        store.append_message("done", {**demo.USER_MESSAGE, "id": "later-3"}, tenant="other")
        store.operations.catch_up()


def verify(url: str, argv: list[str], env: dict[str, str]) -> tuple[str, str]:
    """(exit code, the problems' kinds) of one ``chatledger verify``."""
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--url", url, "verify", *argv])
    except Exception:
        return "crash", traceback.format_exc(limit=-2).strip().splitlines()[-1]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    text = out.getvalue() + err.getvalue()
    kinds: list[str] = []
    for line in text.splitlines():
        where, _, rest = line.partition(": ")
        if where in ("chain", "seal", "log", "snapshot", "read-model", "settings") and (
            rest.startswith(("chat ", "the store"))
        ):
            kind = ""
            if where in ("chain", "seal") and rest.count(": ") >= 2:
                kind = rest.split(": ")[1].split(" at version")[0]
            label = f"{where}:{kind}" if kind and " " not in kind else where
            if label not in kinds:
                kinds.append(label)
        elif line.startswith("chatledger: error"):
            kinds.append("error: " + line.removeprefix("chatledger: error: ")[:60])
    return str(code), ", ".join(kinds) or "-"


@contextlib.contextmanager
def fresh(backend: str, work: Path) -> Iterator[str]:
    if backend == "sqlite":
        path = work / f"{uuid.uuid4().hex}.db"
        yield f"sqlite:///{path}"
        return
    url = _postgres_store_url(f"tamper_{uuid.uuid4().hex}")
    try:
        yield url
    finally:
        drop_schema(url)


def run_kind(backend: str, kind: Kind, work: Path) -> dict[str, tuple[str, str]]:
    witness = work / f"{uuid.uuid4().hex}.witness"
    key_file = work / "seal.key"
    key_file.write_text(SECRET)
    cipher_file = work / "cipher.key"
    cipher = None
    env: dict[str, str] = {}
    if kind.setup.encrypted:
        from eventsourcing.cryptography import AESCipher

        cipher = AESCipher.create_key(16)
        cipher_file.write_text(cipher)
        env["CHATLEDGER_CIPHER_KEY_FILE"] = str(cipher_file)
    with fresh(backend, work) as url:
        fill(url, kind.setup, witness, cipher)
        clean = verify(
            url,
            ["--seal-key-file", str(key_file), "--witness", str(witness)]
            + (["--signed-writes"] if kind.setup.signed else []),
            env,
        )
        assert clean[0] == "0", f"{kind.name}: the store verifies before tampering: {clean}"
        kind.tamper(Tamperer(url))
        full = ["--seal-key-file", str(key_file), "--witness", str(witness)]
        if kind.setup.signed:
            full.append("--signed-writes")
        return {
            "plain": verify(url, [], env),
            "key": verify(url, ["--seal-key-file", str(key_file)], env),
            "all": verify(url, full, env),
        }


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres", "all"], default="all")
    parser.add_argument("--only", help="comma-separated kind names")
    args = parser.parse_args(argv)
    backends = ["sqlite", "postgres"] if args.backend == "all" else [args.backend]
    kinds = [k for k in KINDS if not args.only or k.name in args.only.split(",")]
    load = os.getloadavg()[0]
    print(f"load average (1 min) at start: {load:.2f}")
    print(
        "| # | kind | what | backend | plain | --seal-key-file | + --witness (+ --signed-writes) |"
    )
    print("|---|---|---|---|---|---|---|")
    named = {b: 0 for b in backends}
    work = Path(tempfile.mkdtemp(prefix="tamper-"))
    try:
        for number, kind in enumerate(kinds, start=1):
            for backend in backends:
                cells = run_kind(backend, kind, work)
                if any(code == "1" for code, _ in cells.values()):
                    named[backend] += 1
                shown = [f"{code}: {kinds_}" for code, kinds_ in cells.values()]
                note = (
                    ""
                    if any(c == "1" for c, _ in cells.values())
                    else f" (not named: {kind.expect})"
                )
                print(
                    f"| {number} | {kind.name} | {kind.what}{note} | {backend} | "
                    + " | ".join(shown)
                    + " |",
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for backend, count in named.items():
        print(f"{backend}: {count} of {len(kinds)} kinds named by at least one mode")
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
