"""Storage: eventsourcing's SQLite, PostgreSQL and in-memory recorders, the codec and the read-model tables.

The only package that imports psycopg, sqlite3 or eventsourcing's
persistence modules. It imports nothing else from ``chatledger.adapters``.
"""
