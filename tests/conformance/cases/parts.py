"""Sources, files and data parts: id reconciliation, transient parts (§b.3)."""

CASES = [
    {
        "name": "source_url_minimal_and_full",
        "chunks": [
            {"type": "source-url", "sourceId": "s1", "url": "https://example.com"},
            {
                "type": "source-url",
                "sourceId": "s2",
                "url": "https://example.org/a?b=c",
                "title": "Example",
                "providerMetadata": {"perplexity": {"rank": 1}},
            },
        ],
    },
    {
        "name": "source_document_minimal_and_full",
        "chunks": [
            {
                "type": "source-document",
                "sourceId": "d1",
                "mediaType": "application/pdf",
                "title": "Report",
            },
            {
                "type": "source-document",
                "sourceId": "d2",
                "mediaType": "text/plain",
                "title": "Notes",
                "filename": "notes.txt",
                "providerMetadata": {"anthropic": {"citation": 2}},
            },
        ],
    },
    {
        "name": "file_parts",
        "chunks": [
            {"type": "start-step"},
            {"type": "file", "url": "data:image/png;base64,iVBORw0KGgo=", "mediaType": "image/png"},
            {
                "type": "file",
                "url": "https://cdn.example.com/a.pdf",
                "mediaType": "application/pdf",
                "providerMetadata": {"google": {"fileId": "f1"}},
            },
        ],
    },
    {
        "name": "data_parts_without_id_always_append",
        "chunks": [
            {"type": "data-weather", "data": {"city": "Paris"}},
            {"type": "data-weather", "data": {"city": "Paris"}},
            {"type": "data-x", "data": None},
        ],
    },
    {
        "name": "data_part_with_id_is_replaced_in_place",
        "chunks": [
            {"type": "data-progress", "id": "p1", "data": {"pct": 0}},
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
            {"type": "data-progress", "id": "p1", "data": {"pct": 50}},
            {"type": "data-progress", "id": "p1", "data": {"pct": 100, "done": True}},
        ],
    },
    {
        "name": "data_part_id_matching_needs_same_type",
        "chunks": [
            {"type": "data-a", "id": "same", "data": 1},
            {"type": "data-b", "id": "same", "data": 2},
            {"type": "data-a", "id": "same", "data": 3},
            {"type": "reasoning-start", "id": "same"},
            {"type": "data-b", "id": "same", "data": 4},
        ],
    },
    {
        "name": "data_part_reconciled_across_steps",
        "chunks": [
            {"type": "start-step"},
            {"type": "data-status", "id": "s", "data": "searching"},
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "data-status", "id": "s", "data": "done"},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "data_part_keeps_first_chunk_keys",
        "note": "the first chunk object becomes the part; later chunks only replace data",
        "chunks": [
            {"type": "data-x", "id": "k", "data": [1], "transient": False, "extra": "first"},
            {"type": "data-x", "id": "k", "data": [2], "extra": "second", "more": 1},
        ],
    },
    {
        "name": "transient_data_parts_are_not_stored",
        "chunks": [
            {"type": "data-notice", "data": "typing…", "transient": True},
            {"type": "data-progress", "id": "p", "data": 1},
            {"type": "data-progress", "id": "p", "data": 2, "transient": True},
            {"type": "data-new", "id": "n", "data": 3, "transient": True},
        ],
    },
    {
        "name": "data_part_with_hyphenated_name_and_nested_data",
        "chunks": [
            {
                "type": "data-search-results",
                "id": "r",
                "data": {"items": [{"t": "a", "s": 0.5}, {"t": "b", "s": 1e-3}], "next": None},
            },
        ],
    },
]
