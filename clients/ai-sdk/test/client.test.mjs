// Unit tests of the package (node:test), against a recording fetch: no server.
// `npm test` runs them; so does tests/integration/test_js_client.py.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatLedger, ChatLedgerError, fromSse, toSse } from '../dist/index.js';

const chunks = [
  { type: 'start' },
  { type: 'start-step' },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'Hi\n\nthere' },
  { type: 'text-end', id: 't' },
  { type: 'finish-step' },
  { type: 'finish' },
];
const streamOf = items => new ReadableStream({ start(c) { items.forEach(i => c.enqueue(i)); c.close(); } });
const read = async stream => { const out = []; for await (const x of stream) out.push(x); return out; };
const text = async stream => new TextDecoder().decode(Buffer.concat(await read(stream)));

/** A fetch that records each request and answers with `answer(request, body)`. */
function recorder(answer) {
  const requests = [];
  const fetch = async (url, init = {}) => {
    const request = { url, method: init.method ?? 'GET', headers: init.headers ?? {}, body: init.body };
    requests.push(request);
    if (init.body instanceof ReadableStream) request.body = await text(init.body);
    return answer(request);
  };
  return { fetch, requests };
}
/** Options whose `onStored` resolves `stored` (the report of the write). */
const whenStored = (more = {}) => {
  let resolve;
  const stored = new Promise(r => (resolve = r));
  return { options: { ...more, onStored: resolve, onError: resolve }, stored };
};
const ledgerWith = (answer, more = {}) => {
  const recorded = recorder(answer);
  const ledger = new ChatLedger({ url: 'http://ledger/', token: 't0k', owner: 'client:test', fetch: recorded.fetch, ...more });
  return { ledger, requests: recorded.requests };
};

test('SSE: chunks framed and read back, pieces cut anywhere, [DONE] ends them', async () => {
  const bytes = Buffer.concat(await read(toSse(streamOf(chunks))));
  assert.ok(bytes.toString().endsWith('data: [DONE]\n\n'));
  for (const size of [1, 3, 7, 1000]) {
    const pieces = [];
    for (let i = 0; i < bytes.length; i += size) pieces.push(bytes.subarray(i, i + size));
    pieces.push(new TextEncoder().encode('data: {"type":"after-done"}\n\n'));
    assert.deepEqual(await read(fromSse(streamOf(pieces))), chunks);
  }
});

test('persist: the same chunks back, all of them to /answers as SSE with a key, start named', async () => {
  const { ledger, requests } = ledgerWith(() => Response.json({ outcome: 'finished', closedElsewhere: false }));
  const { options, stored } = whenStored();
  const back = await read(ledger.persist('c 1', streamOf(chunks), options));
  assert.equal(back[0].type, 'start');
  assert.match(back[0].messageId, /^[0-9a-f-]{36}$/);
  assert.deepEqual(back.slice(1), chunks.slice(1));
  assert.deepEqual(await stored, { outcome: 'finished', closedElsewhere: false });
  const [post] = requests;
  assert.equal(post.url, 'http://ledger/api/chats/c%201/answers');
  assert.equal(post.headers['content-type'], 'text/event-stream');
  assert.equal(post.headers.authorization, 'Bearer t0k');
  assert.ok(post.headers['idempotency-key']);
  assert.deepEqual(await read(fromSse(streamOf([post.body]))), back);
});

test('persist: a continuation keeps its start as it is; a stop aborts the model', async () => {
  const { ledger, requests } = ledgerWith(() => Response.json({ outcome: 'aborted', closedElsewhere: true, reason: 'stopped by ann' }));
  const abortController = new AbortController();
  const report = await ledger.store('c', streamOf(chunks), { continuation: true, idempotencyKey: 'k1', abortController });
  assert.equal(report.outcome, 'aborted');
  assert.ok(abortController.signal.aborted);
  assert.equal(requests[0].url, 'http://ledger/api/chats/c/answers?continuation=true');
  assert.equal(requests[0].headers['idempotency-key'], 'k1');
  assert.deepEqual((await read(fromSse(streamOf([requests[0].body]))))[0], { type: 'start' });
});

test('persist: a browser that goes away leaves the answer to be stored whole', async () => {
  let release;
  const held = new Promise(r => (release = r));
  const source = new ReadableStream({
    async start(c) {
      c.enqueue(chunks[0]);
      await held;
      chunks.slice(1).forEach(x => c.enqueue(x));
      c.close();
    },
  });
  const { ledger, requests } = ledgerWith(() => Response.json({ outcome: 'finished' }));
  const { options, stored } = whenStored();
  const browser = ledger.persist('c', source, options).getReader();
  await browser.read();
  await browser.cancel();
  release();
  await stored;
  assert.equal((await read(fromSse(streamOf([requests[0].body])))).length, chunks.length);
});

test('persistResponse: the Response of toUIMessageStreamResponse, stored and returned', async () => {
  const { ledger, requests } = ledgerWith(() => Response.json({ outcome: 'finished' }));
  const response = new Response(toSse(streamOf(chunks)), { headers: { 'x-extra': '1' } });
  const { options, stored } = whenStored({ messageId: 'm1' });
  const returned = ledger.persistResponse('c', response, options);
  assert.equal(returned.headers.get('x-vercel-ai-ui-message-stream'), 'v1');
  assert.equal(returned.headers.get('x-extra'), '1');
  const back = await read(fromSse(returned.body));
  assert.deepEqual(back[0], { type: 'start', messageId: 'm1' });
  await stored;
  assert.deepEqual(await read(fromSse(streamOf([requests[0].body]))), back);
});

test('receive: a user message starts the chat as this owner and appends it', async () => {
  const { ledger, requests } = ledgerWith(({ url }) =>
    url.endsWith('/api/chats') ? Response.json({ id: 'c', created: true }, { status: 201 })
      : url.endsWith('/messages') && requests.at(-1).method === 'POST' ? Response.json({ changed: true })
        : Response.json({ messages: [{ id: 'u1', role: 'user', parts: [] }] }));
  const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  const received = await ledger.receive('c', [user]);
  assert.equal(received.continuation, false);
  assert.deepEqual(JSON.parse(requests[0].body), { id: 'c', owner: 'client:test', aiSdk: 7 });
  assert.deepEqual(JSON.parse(requests[1].body), { message: user });
});

test('receive: approvals and tool outputs the browser gave are recorded (once the answer is stored), then it continues', async () => {
  const stored = {
    id: 'a1', role: 'assistant', parts: [
      { type: 'tool-weather', toolCallId: 'c1', state: 'approval-requested', approval: { id: 'ap1' } },
      { type: 'tool-ask', toolCallId: 'c2', state: 'input-available', input: {} },
      { type: 'tool-done', toolCallId: 'c3', state: 'output-available', output: 1 },
    ],
  };
  const sent = {
    ...stored, parts: [
      { ...stored.parts[0], state: 'approval-responded', approval: { id: 'ap1', approved: false, reason: 'no' } },
      { ...stored.parts[1], state: 'output-available', output: { yes: true } },
      stored.parts[2],
    ],
  };
  let statuses = ['streaming', 'streaming', 'awaiting-approval', 'ready-to-continue'];
  const { ledger, requests } = ledgerWith(({ url, method }) =>
    url.endsWith('/status') ? Response.json({ status: statuses.shift() })
      : url.endsWith('/messages') && method === 'GET' ? Response.json({ messages: [stored] })
        : Response.json({ changed: true }));
  const received = await ledger.receive('c', [sent]);
  assert.equal(received.continuation, true);
  assert.deepEqual(statuses, []); // it waited for the answer another instance was closing
  const posted = requests.filter(r => r.method === 'POST').map(r => [r.url.split('/').at(-1), r.body && JSON.parse(r.body)]);
  assert.deepEqual(posted.slice(1), [
    ['approvals', { approvalId: 'ap1', approved: false, reason: 'no', autoContinue: false }],
    ['tool-outputs', { toolCallId: 'c2', autoContinue: false, output: { yes: true } }],
  ]);
});

test('resume: 204 when nothing streams, else the stream with the UI-message headers', async () => {
  let streaming = false;
  const { ledger, requests } = ledgerWith(() =>
    streaming ? new Response(toSse(streamOf(chunks)), { status: 200 }) : new Response(null, { status: 204 }));
  assert.equal((await ledger.resume('c/1')).status, 204);
  assert.equal(requests[0].url, 'http://ledger/api/chat/c%2F1/stream');
  streaming = true;
  const response = await ledger.resume('c/1');
  assert.equal(response.headers.get('content-type'), 'text/event-stream');
  assert.deepEqual(await read(fromSse(response.body)), chunks);
});

test('claims: null on 204, the request on 200; the loop hands requests over until aborted', async () => {
  const request = { chatId: 'c', requestId: 'r1', owner: 'client:test' };
  let calls = 0;
  const { ledger, requests } = ledgerWith(() =>
    ++calls === 2 ? Response.json({ request }) : new Response(null, { status: 204 }));
  assert.equal(await ledger.claimContinuation({ waitSeconds: 0 }), null);
  assert.deepEqual(JSON.parse(requests[0].body), { owner: 'client:test', waitSeconds: 0 });
  const stop = new AbortController();
  const handled = [];
  await ledger.continuations(async r => { handled.push(r); stop.abort(); }, { signal: stop.signal, waitSeconds: 1 });
  assert.deepEqual(handled, [request]);
});

test('a refusal is a ChatLedgerError with its status, type and message', async () => {
  const { ledger } = ledgerWith(() =>
    Response.json({ error: { type: 'InvalidRequestError', message: "'owner' is bad" } }, { status: 422 }));
  await assert.rejects(ledger.startChat('c'), error =>
    error instanceof ChatLedgerError && error.status === 422 && error.type === 'InvalidRequestError' &&
    error.message.includes("'owner' is bad"));
  assert.throws(() => new ChatLedger({ url: 'http://x' }), /owner/);
});
