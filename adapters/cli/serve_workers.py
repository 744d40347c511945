"""``chatledger serve --workers N``: N server processes on one port, each with its own store, one database.

One Python process serves from one core (the interpreter lock), so a node
with more cores runs several: uvicorn starts N worker processes that share
the listening socket, and each opens its own ``ConversationStore`` on the
same database (its own connections, its own ``News`` watcher). Any of them
can answer any request: a resume reads the log, whichever process writes
the answer; a stop closes the stream the writing process then notices.

The parent resolves the settings once (tokens and the app's ``AppSettings``
included) and hands them to the workers in the environment variable
``CHATLEDGER_SERVE_WORKER`` (JSON; readable only by the same user, as
``$CHATLEDGER_TOKENS`` is). Each worker builds its app from it in ``app()``,
the factory uvicorn calls; the seal key is not written there: each worker
reads it from the same file or environment variable as the parent.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from chatledger.adapters.http.settings import AppSettings

__all__ = ["CONFIG_ENV", "WorkerSettings", "app", "serve_workers", "settings_json"]

CONFIG_ENV = "CHATLEDGER_SERVE_WORKER"
"""The environment variable carrying the workers' settings (JSON)."""


@dataclass
class WorkerSettings:
    """What every worker needs to build the same app the parent would."""

    url: str | None
    tenant: str
    responder: str
    delay: float
    cipher_key: str | None = None
    ai_sdk: int | None = None
    tokens: dict[str, list[str | None]] | None = None
    """token -> [tenant, user]; None: every request is ``tenant`` (``--no-auth``)."""
    token_file: str | None = None
    """The token file each worker reads again when it changes (the tokens above came from it)."""
    app: dict[str, Any] = field(default_factory=dict)
    """The app's ``AppSettings`` but its seal key, as JSON (``settings_json``)."""
    seal_key_file: str | None = None
    """``--seal-key-file``; without it each worker looks in the environment, as the parent did."""


def settings_json(settings: AppSettings) -> dict[str, Any]:
    """``settings`` as JSON values, all but the seal key (a secret, read again by each worker)."""
    return {f.name: getattr(settings, f.name) for f in fields(settings) if f.name != "seal_key"}


def serve_workers(
    settings: WorkerSettings, host: str, port: int, workers: int, log_level: str
) -> None:
    """Run ``workers`` server processes on ``host:port`` until interrupted."""
    import uvicorn

    from chatledger.adapters.http.server_options import server_options

    options = server_options()
    os.environ[CONFIG_ENV] = json.dumps(asdict(settings))
    uvicorn.run(
        "chatledger.adapters.cli.serve_workers:app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        loop=options.loop,
        http=options.http,
    )


def app() -> Starlette:
    """The app of one worker process, from ``$CHATLEDGER_SERVE_WORKER`` (uvicorn's factory)."""
    from chatledger.adapters.cli.common import load_responder, seal_key
    from chatledger.adapters.http.app import create_app
    from chatledger.adapters.http.auth import Identity
    from chatledger.adapters.http.settings import AppSettings
    from chatledger.adapters.store import ConversationStore

    settings = WorkerSettings(**json.loads(os.environ[CONFIG_ENV]))
    store = ConversationStore.open(
        settings.url, tenant=settings.tenant, cipher_key=settings.cipher_key, ai_sdk=settings.ai_sdk
    )
    atexit.register(store.close)  # after uvicorn's shutdown has closed the open answers
    tokens = (
        None
        if settings.tokens is None
        else {
            token: Identity(str(tenant), user) for token, (tenant, user) in settings.tokens.items()
        }
    )
    authenticate = None
    if settings.token_file is not None:  # read again when it changes, in every worker
        from chatledger.adapters.cli.tokens import TOKENS_ENV
        from chatledger.adapters.http.token_file import TokenFile

        entries = [e.strip() for e in os.environ.get(TOKENS_ENV, "").split(",") if e.strip()]
        authenticate = TokenFile(Path(settings.token_file), entries)
    key = seal_key(argparse.Namespace(seal_key_file=settings.seal_key_file), required=False)
    return create_app(
        store,
        responder=load_responder(settings.responder, settings.delay),
        tokens=tokens,
        authenticate=authenticate,
        settings=AppSettings(**settings.app, seal_key=key),
    )
