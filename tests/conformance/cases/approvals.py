"""Tool approvals: requests, answers given by a starting message, denials (§a, §c.1-c.2)."""


def _available(call, value=None, name="deleteFile", **extra):
    return {
        "type": "tool-input-available",
        "toolCallId": call,
        "toolName": name,
        "input": {"path": "/tmp/x"} if value is None else value,
        **extra,
    }


def _message(*parts, mid="msg-a", **extra):
    return {"id": mid, "role": "assistant", "parts": [{"type": "step-start"}, *parts], **extra}


def _part(call, state, name="deleteFile", **fields):
    return {
        "type": f"tool-{name}",
        "toolCallId": call,
        "state": state,
        "input": {"path": "/tmp/x"},
        **fields,
    }


APPROVED = {"id": "ap1", "approved": True}
DENIED = {"id": "ap1", "approved": False, "reason": "not allowed"}

CASES = [
    {
        "name": "approval_request_minimal",
        "chunks": [
            {"type": "start-step"},
            _available("c1"),
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "tool-calls"},
        ],
    },
    {
        "name": "approval_request_with_descriptor_signature_input_schema_input",
        "chunks": [
            _available("c1"),
            {
                "type": "tool-approval-request",
                "approvalId": "ap1",
                "toolCallId": "c1",
                "approvalDescriptor": {"title": "Delete /tmp/x?", "risk": "high"},
                "inputSchemaInput": {"path": "/tmp/x", "recursive": False},
                "signature": "hmac-sha256:abc123",
            },
        ],
    },
    {
        "name": "approval_request_null_optionals",
        "note": "a null descriptor is dropped, a null inputSchemaInput is kept",
        "chunks": [
            _available("c1"),
            {
                "type": "tool-approval-request",
                "approvalId": "ap1",
                "toolCallId": "c1",
                "approvalDescriptor": None,
                "inputSchemaInput": None,
            },
        ],
    },
    {
        "name": "approval_request_scalar_descriptor",
        "chunks": [
            _available("c1"),
            {
                "type": "tool-approval-request",
                "approvalId": "ap1",
                "toolCallId": "c1",
                "approvalDescriptor": "Delete it?",
            },
        ],
    },
    {
        "name": "approval_rerequested_with_new_id_replaces_approval",
        "chunks": [
            _available("c1"),
            {
                "type": "tool-approval-request",
                "approvalId": "ap1",
                "toolCallId": "c1",
                "signature": "s1",
            },
            {"type": "tool-approval-request", "approvalId": "ap2", "toolCallId": "c1"},
        ],
    },
    {
        "name": "approval_requests_for_two_calls",
        "chunks": [
            {"type": "start-step"},
            _available("c1"),
            _available("c2", {"path": "/tmp/y"}),
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
            {"type": "tool-approval-request", "approvalId": "ap2", "toolCallId": "c2"},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "approval_request_for_dynamic_and_provider_executed_calls",
        "chunks": [
            _available("d1", {"q": 1}, name="mcp_tool", dynamic=True),
            _available("p1", {"q": 2}, name="code_exec", providerExecuted=True),
            {"type": "tool-approval-request", "approvalId": "ap-d", "toolCallId": "d1"},
            {"type": "tool-approval-request", "approvalId": "ap-p", "toolCallId": "p1"},
        ],
    },
    {
        "name": "approval_request_for_earlier_step_call",
        "chunks": [
            {"type": "start-step"},
            _available("c1"),
            {"type": "finish-step"},
            {"type": "start-step"},
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
        ],
    },
    {
        "name": "output_denied_after_approval_request",
        "chunks": [
            _available("c1"),
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
            {"type": "tool-output-denied", "toolCallId": "c1"},
        ],
    },
    {
        "name": "output_denied_on_input_available",
        "chunks": [_available("c1"), {"type": "tool-output-denied", "toolCallId": "c1"}],
    },
    {
        "name": "output_available_on_approval_requested_keeps_approval",
        "chunks": [
            _available("c1"),
            {
                "type": "tool-approval-request",
                "approvalId": "ap1",
                "toolCallId": "c1",
                "approvalDescriptor": "d",
            },
            {"type": "tool-output-available", "toolCallId": "c1", "output": "deleted"},
        ],
    },
    {
        "name": "input_error_on_approval_requested_keeps_approval",
        "chunks": [
            _available("c1"),
            {"type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "c1"},
            {
                "type": "tool-input-error",
                "toolCallId": "c1",
                "toolName": "deleteFile",
                "input": {"path": 1},
                "errorText": "re-validation failed",
            },
        ],
    },
    {
        "name": "approval_responded_then_output_available",
        "message": _message(
            _part("c1", "approval-responded", approval=APPROVED), metadata={"turn": 1}
        ),
        "chunks": [
            {"type": "start", "messageId": "msg-a"},
            {"type": "tool-output-available", "toolCallId": "c1", "output": {"deleted": True}},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Deleted."},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
            {"type": "finish", "finishReason": "stop"},
        ],
    },
    {
        "name": "approval_responded_then_output_error",
        "message": _message(
            _part(
                "c1", "approval-responded", approval={**APPROVED, "reason": "ok", "signature": "s"}
            )
        ),
        "chunks": [
            {"type": "start"},
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "disk busy"},
        ],
    },
    {
        "name": "approval_responded_dynamic_provider_executed_then_output",
        "message": _message(
            {
                "type": "dynamic-tool",
                "toolName": "code_exec",
                "toolCallId": "p1",
                "state": "approval-responded",
                "input": {"code": "1+1"},
                "providerExecuted": True,
                "approval": APPROVED,
            }
        ),
        "chunks": [
            {
                "type": "tool-output-available",
                "toolCallId": "p1",
                "output": 2,
                "providerExecuted": True,
                "providerMetadata": {"x": {"y": 1}},
            },
        ],
    },
    {
        "name": "approval_requested_in_message_then_denied_by_server",
        "message": _message(_part("c1", "approval-requested", approval={"id": "ap1"})),
        "chunks": [{"type": "start"}, {"type": "tool-output-denied", "toolCallId": "c1"}],
    },
    {
        "name": "mixed_batch_answered_in_continuation",
        "message": _message(
            _part("c1", "approval-responded", approval=APPROVED),
            _part("c2", "output-available", name="getTime", output="12:00"),
            _part("c3", "approval-responded", approval={"id": "ap3", "approved": True}),
        ),
        "chunks": [
            {"type": "start", "messageId": "msg-a"},
            {"type": "tool-output-available", "toolCallId": "c3", "output": "done-3"},
            {"type": "tool-output-error", "toolCallId": "c1", "errorText": "failed-1"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-end", "id": "t"},
            {"type": "finish-step"},
        ],
    },
    {
        "name": "approval_responded_parts_untouched_by_unrelated_chunks",
        "message": _message(
            _part("c1", "approval-responded", approval=DENIED),
            {
                "type": "dynamic-tool",
                "toolName": "mcp",
                "toolCallId": "d1",
                "state": "approval-responded",
                "input": {},
                "approval": APPROVED,
            },
        ),
        "chunks": [
            {"type": "start"},
            {"type": "start-step"},
            {"type": "text-start", "id": "t"},
            {"type": "text-delta", "id": "t", "delta": "Waiting for the tools."},
            {"type": "text-end", "id": "t"},
        ],
    },
]
