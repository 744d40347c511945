"""Corpus themes: each module holds a ``CASES`` list of ``{name, chunks, message?, note?}``."""
