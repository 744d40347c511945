"""Any one stored row damaged (changed, removed, swapped between conversations, unreadable): named, never a crash.

A store is filled (finished, paused, continuing conversations in two
tenants), sealed and closed; hypothesis then damages one row of one table
with plain SQL (``tests.integration.corrupt``) and runs the tools meant to
inspect it, as an operator would: ``chatledger verify``, and ``show``,
``status``, ``audit`` and ``inbox``. None may end in a traceback: each
gives output or a chatledger error, and an exit code. ``verify`` names a
problem (exit 1) for every damage to the log and to the read models it
compares; the kinds tried and their results are printed (``-s``).
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import traceback
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chatledger import ConversationStore
from chatledger.adapters.cli.commands import main
from chatledger.adapters.responders import demo
from chatledger.domain.seal import SealKey
from tests.integration.conftest import Backend, _postgres_store_url, drop_schema
from tests.integration.corrupt import KINDS, Corrupter, Damage

KEY = SealKey.from_text("an operator secret of thirty-two bytes")
CHATS = [("default", "done"), ("default", "paused"), ("default", "continuing"), ("other", "done")]

EXAMPLES = {"sqlite": 60, "postgres": 20}

UNCHECKED = {
    "chatledger_integrity_notes",  # notes for people (when chains were started)
    "chatledger_export_positions",  # where an exporter resumes; re-exporting is idempotent
    "chatledger_quarantine",  # events the projector skipped; verify lists what is quarantined now
    "chatledger_conversation_list_v2.search",  # PostgreSQL's search words: not compared
}
"""Tables (and ``table.column``) whose damage ``verify`` need not name (none of it is evidence);
damage there must still never crash a tool. The first three are empty in the store filled here."""

BOOKKEEPING = (
    "chatledger_conversation_list_v2",
    "chatledger_settings",
    "tracking",
    "chatledger_tracking",
)
"""The conversation list, the settings and the tracking table (SQLite's and PostgreSQL's name)."""


def fill(store: ConversationStore) -> None:
    """Finished, paused and continuing conversations, in two tenants; sealed; read models caught up."""
    demo.record_demo(store, "done")
    for chat in ("paused", "continuing"):
        store.start_conversation(chat)
        store.append_message(chat, demo.USER_MESSAGE)
        store.ingest(chat, demo.first_turn_chunks())
    store.respond_to_approval("continuing", approval_id=demo.APPROVAL_ID, approved=True)
    store.start_conversation("done", tenant="other")
    store.append_message("done", demo.USER_MESSAGE, tenant="other")
    store.operations.seal(KEY)
    store.operations.catch_up()


def run_cli(url: str, *argv: str) -> tuple[int | None, str]:
    """Exit code of one command (None: it raised), and its output or the traceback."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--url", url, *argv])
    except Exception:
        return None, traceback.format_exc(limit=-4)
    return code, out.getvalue() + err.getvalue()


def inspect(url: str, key_file: Path) -> tuple[int | None, list[str], list[str]]:
    """``verify``'s exit code, every command that crashed (with its traceback), and what all showed."""
    crashes, shown = [], []
    code, text = run_cli(url, "verify", "--seal-key-file", str(key_file))
    if code is None:
        crashes.append(f"verify\n{text}")
    commands = [
        (tenant, [command, chat, *extra])
        for tenant, chat in CHATS
        for command, *extra in (["show"], ["status"], ["audit"], ["show", "--at-version", "3"])
    ]
    extra = [
        (tenant, [command]) for tenant in ("default", "other") for command in ("inbox", "list")
    ]
    for tenant, command in [*commands, *extra]:
        done, output = run_cli(url, "--tenant", tenant, *command)
        if done is None:
            crashes.append(f"{' '.join(command)} (tenant {tenant})\n{output}")
        shown.append(f"{done} {re.sub(r'[0-9]+ (min|s)', '', output)}")
    return code, crashes, shown


damages = st.tuples(
    st.integers(0, 10_000),  # table
    st.sampled_from(KINDS),
    st.integers(0, 10_000),  # row
    st.integers(0, 10_000),  # column
    st.integers(0, 10_000),  # the other row of a swap
)


class Results:
    """Verify's exit code by damage kind and table, and the crashes, over the examples."""

    def __init__(self) -> None:
        self.named: Counter[str] = Counter()
        self.unnamed: list[Damage] = []
        self.harmless: set[str] = set()
        """Damage no tool shows (a snapshot gone, a swap of equal rows): nothing to name."""
        self.crashes: list[str] = []
        self.examples = 0

    def add(self, damage: Damage, code: int | None, crashes: list[str], unseen: bool) -> None:
        """Count one damaged store; ``unseen``: every tool showed exactly what it showed before."""
        self.examples += 1
        self.crashes.extend(f"{damage}: {crash}" for crash in crashes)
        if code == 1:
            self.named[damage.kind] += 1
        elif unseen:
            self.harmless.add(str(damage))
        elif damage.table not in UNCHECKED and f"{damage.table}.{damage.column}" not in UNCHECKED:
            self.unnamed.append(damage)

    def check_all_named(self) -> None:
        """Even damage no tool shows is named, but for rows opening the store writes again.

        Those are eventsourcing's layout row of the tracking table, and the
        key check value: recorded again once the first event decodes with the
        key given (how a store from before check values is upgraded).
        """
        shown = {h for h in self.harmless if h.split(" ", 1)[1] not in UNCHECKED}
        restored = {"remove tracking", "remove chatledger_tracking", "remove chatledger_settings"}
        assert shown <= restored, shown

    def check(self, backend: str) -> None:
        print(
            f"\n{backend}: {self.examples} damaged stores; verify named {dict(self.named)}; "
            f"unnamed {sorted(set(map(str, self.unnamed)))}; harmless {sorted(self.harmless)}; "
            f"crashes {len(self.crashes)}"
        )
        assert self.examples > 0
        assert not self.crashes, f"{len(self.crashes)} crashes, e.g.:\n" + "\n".join(
            self.crashes[:3]
        )
        assert not self.unnamed, f"damage verify did not name: {sorted(map(str, self.unnamed))}"


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "seal.key"
    path.write_text("an operator secret of thirty-two bytes")
    return path


@pytest.mark.timeout(600)
def test_any_damaged_row_of_a_sqlite_store_is_named_never_a_crash(
    tmp_path: Path, key_file: Path
) -> None:
    sqlite_examples(tmp_path, key_file, EXAMPLES["sqlite"], only=None)


@pytest.mark.timeout(600)
def test_a_damaged_list_tracking_or_settings_row_of_a_sqlite_store_is_named(
    tmp_path: Path, key_file: Path
) -> None:
    """The tables beside the log and the per-conversation read models: each damage named too."""
    sqlite_examples(tmp_path, key_file, 40, only=BOOKKEEPING)


def sqlite_examples(
    tmp_path: Path, key_file: Path, examples: int, only: tuple[str, ...] | None
) -> None:
    base = tmp_path / "base.db"
    with ConversationStore.open(f"sqlite:///{base}") as store:
        fill(store)
    results = Results()

    @settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(choice=damages)
    def damaged(choice: tuple[int, str, int, int, int]) -> None:
        path = tmp_path / "damaged.db"
        for stale in (path, path.with_name("damaged.db-wal"), path.with_name("damaged.db-shm")):
            stale.unlink(missing_ok=True)
        shutil.copy(base, path)
        url = f"sqlite:///{path}"
        results_of(url, choice, results, key_file, only)

    damaged()
    results.check("sqlite")
    if only is not None:
        results.check_all_named()


@pytest.mark.postgres
@pytest.mark.timeout(600)
def test_any_damaged_row_of_a_postgres_store_is_named_never_a_crash(
    postgres_server: str, key_file: Path
) -> None:
    postgres_examples(key_file, EXAMPLES["postgres"], only=None)


@pytest.mark.postgres
@pytest.mark.timeout(600)
def test_a_damaged_list_tracking_or_settings_row_of_a_postgres_store_is_named(
    postgres_server: str, key_file: Path
) -> None:
    postgres_examples(key_file, 12, only=BOOKKEEPING)


def postgres_examples(key_file: Path, examples: int, only: tuple[str, ...] | None) -> None:
    results = Results()

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(choice=damages)
    def damaged(choice: tuple[int, str, int, int, int]) -> None:
        with fresh_postgres() as url:
            with ConversationStore.open(url) as store:
                fill(store)
            results_of(url, choice, results, key_file, only)

    damaged()
    results.check("postgres")
    if only is not None:
        results.check_all_named()


@contextlib.contextmanager
def fresh_postgres() -> Iterator[str]:
    url = _postgres_store_url(f"t_{uuid.uuid4().hex}")
    try:
        yield url
    finally:
        drop_schema(url)


def results_of(
    url: str,
    choice: tuple[int, str, int, int, int],
    results: Results,
    key_file: Path,
    only: tuple[str, ...] | None,
) -> None:
    """Damage the store at ``url`` as ``choice`` says (in a table of ``only``, if given); count."""
    table_at, kind, row, column, other = choice
    _, _, before = inspect(url, key_file)
    corrupter = Corrupter(url)
    tables = [t for t in corrupter.tables() if only is None or t in only]
    damage = corrupter.damage(tables[table_at % len(tables)], kind, row, column, other)
    if damage is None:
        return  # that damage cannot be done to that row (a key clash, a type that refuses it)
    code, crashes, after = inspect(url, key_file)
    results.add(damage, code, crashes, unseen=after == before)


@pytest.mark.parametrize("whole", [True, False], ids=["all-events", "one-event-each"])
def test_two_conversations_with_swapped_events_are_named_and_show_says_so(
    durable_backend: Backend, key_file: Path, whole: bool
) -> None:
    """Events exchanged between two conversations (the issue: AssertionError in show and verify)."""
    with ConversationStore.open(durable_backend.url) as store:
        fill(store)
    corrupter = Corrupter(durable_backend.url)
    done, continuing = corrupter.key("done"), corrupter.key("continuing")
    parked = corrupter.key("parked")
    events = corrupter.events
    if whole:
        move = f"UPDATE {events} SET originator_id = ? WHERE originator_id = ?"
        for source, target in ((done, parked), (continuing, done), (parked, continuing)):
            corrupter.run(move, target, source)
    else:  # continuing's approval answer (version 8) for done's version 2, and back
        move = (
            f"UPDATE {events} SET originator_id = ?, originator_version = ? "
            "WHERE originator_id = ? AND originator_version = ?"
        )
        corrupter.run(move, parked, 0, continuing, 8)
        corrupter.run(move, continuing, 8, done, 2)
        corrupter.run(move, done, 2, parked, 0)
    code, text = run_cli(durable_backend.url, "verify", "--seal-key-file", str(key_file))
    assert code == 1, text
    assert "chat 'done'" in text and "chat 'continuing'" in text
    answers = []
    for chat in ("done", "continuing"):
        for at in range(1, 15):
            code, text = run_cli(durable_backend.url, "show", chat, "--at-version", str(at))
            assert code is not None, text  # never a traceback
            answers.append(text)
        for command in (["status", chat], ["show", chat], ["audit", chat]):
            code, text = run_cli(durable_backend.url, *command)
            assert code is not None, text
    # Where the fold trips (an answer for a call the conversation never made), show says why.
    assert any("cannot be rebuilt from its events" in text for text in answers)


def test_an_undecodable_inbox_row_is_named_and_the_inbox_says_so(
    durable_backend: Backend, key_file: Path
) -> None:
    """A pending approval whose input is no JSON (issue: JSONDecodeError on PostgreSQL)."""
    with ConversationStore.open(durable_backend.url) as store:
        fill(store)
    Corrupter(durable_backend.url).run(
        "UPDATE chatledger_pending_approvals SET input = '{not json'"
    )
    code, text = run_cli(durable_backend.url, "verify", "--seal-key-file", str(key_file))
    assert code == 1 and "the approvals inbox cannot be read" in text, text
    code, text = run_cli(durable_backend.url, "inbox")
    assert code == 1 and "approvals inbox cannot be read" in text, text
    code, text = run_cli(durable_backend.url, "rebuild")
    assert code == 0, text
    code, text = run_cli(durable_backend.url, "verify", "--seal-key-file", str(key_file))
    assert code == 0, text
