// The chat page of `chatledger serve`: the real AI SDK useChat (v7) against the same server.
// Built with esbuild into adapters/http/static/chat/chat.js (see package.json "build").
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

const KEY = "chatledger.token"; // the same session token the other pages use

function authHeaders() {
  const token = sessionStorage.getItem(KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function getJSON(path) {
  const response = await fetch(path, { headers: authHeaders() });
  if (response.status === 401) throw Object.assign(new Error("token"), { status: 401 });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}

// What to start from: the stored messages, or, while an answer streams, the messages as they
// stood before its stream opened (the resume rebuilds the answer's message from its replay).
async function loadStart(chatId) {
  const base = `/api/chats/${encodeURIComponent(chatId)}`;
  const status = await getJSON(`${base}/status`);
  if (status === null) return { messages: [], streaming: false };
  if (status.status !== "streaming") {
    return { messages: (await getJSON(`${base}/messages`)).messages, streaming: false };
  }
  const opened = (await getJSON(`${base}/history?kind=stream-opened`)).entries;
  const before = opened[opened.length - 1].position - 1;
  return { messages: (await getJSON(`${base}/messages?atVersion=${before}`)).messages, streaming: true };
}

// Message id -> { index, total, prev, next } for each message of the active path with siblings
// (edits and regenerations): what the `< 2/3 >` arrows show and switch to.
async function loadBranches(chatId) {
  const found = await getJSON(`/api/chats/${encodeURIComponent(chatId)}/branches`);
  const navs = {};
  for (const m of found?.messages ?? []) {
    if (m.total < 2) continue;
    const keys = m.branches.map((b) => b.key);
    const at = m.index - 1;
    navs[m.branches[at].messageId] = {
      index: m.index, total: m.total, prev: keys[at - 1] ?? null, next: keys[at + 1] ?? null,
    };
  }
  return navs;
}

function BranchNav({ nav, onSwitch, disabled }) {
  return (
    <nav className="branch-nav" aria-label="Branches of this message">
      <button type="button" className="branch-prev" aria-label="Previous branch"
        disabled={disabled || !nav.prev} onClick={() => onSwitch(nav.prev)}>&lt;</button>
      <span className="branch-of">{nav.index}/{nav.total}</span>
      <button type="button" className="branch-next" aria-label="Next branch"
        disabled={disabled || !nav.next} onClick={() => onSwitch(nav.next)}>&gt;</button>
    </nav>
  );
}

function Part({ part, onAnswer }) {
  if (part.type === "text") return <p className="part text">{part.text}</p>;
  if (part.type === "reasoning") {
    return <details className="part reasoning"><summary>Reasoning</summary><p>{part.text}</p></details>;
  }
  if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
    return <ToolPart part={part} onAnswer={onAnswer} />;
  }
  if (part.type === "file") return <FilePart part={part} />;
  return null;
}

// An image inline, any other file a download link; only data: and http(s): URLs are followed.
function FilePart({ part }) {
  const url = typeof part.url === "string" && /^(data|https?):/i.test(part.url) ? part.url : null;
  const media = part.mediaType ?? "";
  const name = part.filename || media || "file";
  return (
    <figure className="part file" data-media-type={media}>
      {url && media.startsWith("image/") && <img src={url} alt={name} />}
      <figcaption>
        {url ? <a href={url} download={name}>{name}</a> : name}
        <span className="media-type">{media}</span>
      </figcaption>
    </figure>
  );
}

function ToolPart({ part, onAnswer }) {
  const [reason, setReason] = useState("");
  const name = part.toolName ?? part.type.slice(5);
  return (
    <div className={`part tool state-${part.state}`} data-tool-call-id={part.toolCallId}>
      <p className="tool-head">
        <span className="tool-name">{name}</span> <span className="tool-state">{part.state}</span>
      </p>
      <pre>{JSON.stringify(part.input, null, 2)}</pre>
      {part.output !== undefined && <pre className="tool-output">{JSON.stringify(part.output, null, 2)}</pre>}
      {part.errorText && <p className="tool-error">{part.errorText}</p>}
      {part.approval?.reason && <p className="approval">Reason: {part.approval.reason}</p>}
      {part.state === "approval-requested" && (
        <form className="answer" onSubmit={(event) => {
          event.preventDefault();
          const approved = event.nativeEvent.submitter?.value === "approve";
          onAnswer({ id: part.approval.id, approved, reason: reason || undefined });
        }}>
          <label htmlFor={`reason-${part.toolCallId}`}>Reason</label>
          <input id={`reason-${part.toolCallId}`} value={reason} onChange={(e) => setReason(e.target.value)} />
          <button type="submit" value="approve">Approve</button>
          <button type="submit" value="deny">Deny</button>
        </form>
      )}
    </div>
  );
}

function Chat({ chatId, start }) {
  const [input, setInput] = useState("");
  const [branches, setBranches] = useState({});
  const [switchError, setSwitchError] = useState(null);
  const { messages, setMessages, sendMessage, status, stop, error, addToolApprovalResponse } = useChat({
    id: chatId,
    messages: start.messages,
    resume: start.streaming,
    // v7's default resumeStreamIsReplay: chatledger's resume replays the whole assistant message
    // (a continuation's stream comes after the message as the continuation found it).
    transport: new DefaultChatTransport({ api: "/api/chat", headers: authHeaders }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const busy = status === "submitted" || status === "streaming";
  useEffect(() => {
    if (!busy) loadBranches(chatId).then(setBranches, () => setBranches({}));
  }, [busy, chatId]);
  // A switch is recorded by the server (audited); useChat is then given the new path's messages.
  const switchTo = async (to) => {
    setSwitchError(null);
    const response = await fetch(`/api/chats/${encodeURIComponent(chatId)}/branches`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...authHeaders() },
      body: JSON.stringify({ to }),
    });
    const body = await response.json();
    if (!response.ok) { setSwitchError(body.error?.message ?? `HTTP ${response.status}`); return; }
    setMessages(body.messages);
    setBranches(await loadBranches(chatId));
  };
  const stopAll = async () => {
    stop();
    await fetch(`/api/chats/${encodeURIComponent(chatId)}/stop`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...authHeaders() },
      body: JSON.stringify({ reason: "stopped from the chat page" }),
    });
  };
  return (
    <div className="chat" data-status={status}>
      <div id="messages" className="messages" aria-live="polite">
        {messages.map((m) => (
          <article key={m.id} className={`message role-${m.role}`} data-message-id={m.id} data-role={m.role}>
            <p className="role">{m.role}</p>
            {branches[m.id] && <BranchNav nav={branches[m.id]} onSwitch={switchTo} disabled={busy} />}
            {m.parts.map((part, i) => <Part key={i} part={part} onAnswer={addToolApprovalResponse} />)}
          </article>
        ))}
      </div>
      {error && <p className="error" role="alert">{error.message}</p>}
      {switchError && <p className="error" role="alert">{switchError}</p>}
      <form className="composer" onSubmit={(event) => {
        event.preventDefault();
        if (!input.trim()) return;
        sendMessage({ text: input });
        setInput("");
      }}>
        <label htmlFor="prompt">Message</label>
        <input id="prompt" value={input} onChange={(e) => setInput(e.target.value)} disabled={busy} />
        <button type="submit" disabled={busy}>Send</button>
        <button type="button" id="stop" onClick={stopAll} disabled={!busy}>Stop</button>
        <span id="chat-status">{status}</span>
      </form>
    </div>
  );
}

function TokenForm({ onDone }) {
  const [value, setValue] = useState("");
  return (
    <form className="token" onSubmit={(e) => { e.preventDefault(); sessionStorage.setItem(KEY, value.trim()); onDone(); }}>
      <label htmlFor="token">Access token</label>
      <input id="token" type="password" value={value} onChange={(e) => setValue(e.target.value)} />
      <button type="submit">Use token</button>
    </form>
  );
}

function App() {
  const params = new URLSearchParams(location.search);
  let chatId = params.get("id");
  if (!chatId) {
    chatId = `chat-${crypto.randomUUID().slice(0, 8)}`;
    history.replaceState(null, "", `?id=${encodeURIComponent(chatId)}`);
  }
  const [state, setState] = useState({ phase: "loading" });
  useEffect(() => {
    if (state.phase !== "loading") return;
    loadStart(chatId).then(
      (start) => setState({ phase: "ready", start }),
      (error) => setState({ phase: error.status === 401 ? "token" : "error", error }),
    );
  }, [state.phase, chatId]);
  return (
    <>
      <h1>Chat <code>{chatId}</code></h1>
      <p><a href={`/conversation?id=${encodeURIComponent(chatId)}`}>Audit view of this conversation</a></p>
      {state.phase === "token" && <TokenForm onDone={() => { setState({ phase: "loading" }); }} />}
      {state.phase === "error" && <p className="error" role="alert">{state.error.message}</p>}
      {state.phase === "ready" && <Chat chatId={chatId} start={state.start} />}
    </>
  );
}

createRoot(document.getElementById("app")).render(<App />);
