"""chatledger's domain: the pure model of conversations, chunks and their fold (no I/O)."""
