// The end-to-end tests' AI SDK server: a plain Node HTTP server whose routes are
// the package README's Next.js route handlers, with the SDK's own mock language
// model in streamText. Which `ai` it runs (7, or 6) comes from $AI_SDK_MODULES
// (a node_modules folder); it prints {"port": N} when it listens.
//
//   CHATLEDGER_URL, CHATLEDGER_TOKEN  the chatledger server and its token
//   LEDGER_OWNER                      the owner this app claims as
//   AI_SDK_MAJOR                      7 or 6
//
// The first model call of a turn whose user text has "[gate]" stops after its
// first words until POST /__gate: the tests force what happens while it streams.
// With "[hold]" it then talks on (a word every 20 ms) until it is aborted.
import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ChatLedger } from '../../dist/index.js';

const modules = process.env.AI_SDK_MODULES ?? join(import.meta.dirname, '..', '..', 'node_modules');
const require = createRequire(join(modules, 'noop.js'));
const load = name => import(pathToFileURL(require.resolve(name)).href);
const ai = await load('ai');
const testing = await load('ai/test');
const { streamText, tool, jsonSchema, stepCountIs, createUIMessageStreamResponse, simulateReadableStream } = ai;
const MockLanguageModel = testing.MockLanguageModelV4 ?? testing.MockLanguageModelV3;

const ledger = new ChatLedger({
  url: process.env.CHATLEDGER_URL,
  token: process.env.CHATLEDGER_TOKEN,
  owner: process.env.LEDGER_OWNER ?? 'client:node-app',
  aiSdk: Number(process.env.AI_SDK_MAJOR ?? 7),
});

let openGate;
let gate = new Promise(resolve => (openGate = resolve));

// --- the model: the SDK's mock, answering from the prompt -------------------------
const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
const finish = reason => ({ type: 'finish', finishReason: { unified: reason, raw: reason }, usage });
const text = (id, words) => [
  { type: 'text-start', id },
  ...words.map(w => ({ type: 'text-delta', id, delta: w })),
  { type: 'text-end', id },
];
const lastUserText = prompt => {
  const user = prompt.filter(m => m.role === 'user').at(-1);
  return (user?.content ?? []).filter(p => p.type === 'text').map(p => p.text).join(' ');
};
function answer(prompt) {
  if (prompt.at(-1)?.role === 'tool') {
    return [...text('after', ['It is ', 'sunny ', 'in Paris.']), finish('stop')];
  }
  const said = lastUserText(prompt);
  if (said.includes('weather')) {
    return [
      ...text('before', ['Let me ', 'check.']),
      { type: 'tool-call', toolCallId: 'call-weather-1', toolName: 'weather', input: '{"city":"Paris"}' },
      finish('tool-calls'),
    ];
  }
  return [...text('echo', ['You ', 'said: ', ...said.split(' ').map(w => `${w} `)]), finish('stop')];
}
const model = new MockLanguageModel({
  doStream: async ({ prompt, abortSignal }) => {
    const parts = [{ type: 'stream-start', warnings: [] }, ...answer(prompt)];
    const firstCall = prompt.at(-1)?.role === 'user';
    const gated = lastUserText(prompt).includes('[gate]') && firstCall;
    const held = lastUserText(prompt).includes('[hold]') && firstCall;
    const aborted = new Promise(resolve => abortSignal?.addEventListener('abort', resolve, { once: true }));
    const stream = new ReadableStream({
      async start(controller) {
        for (const [i, part] of parts.entries()) {
          if ((gated || held) && i === 3) await Promise.race([gate, aborted]); // after the first words
          while (held && i === 3 && !abortSignal?.aborted) {
            controller.enqueue({ type: 'text-delta', id: 'before', delta: 'and on ' }); // a model talking
            await Promise.race([aborted, new Promise(resolve => setTimeout(resolve, 20))]);
          }
          if (abortSignal?.aborted) return controller.error(abortSignal.reason); // as a provider's fetch
          controller.enqueue(part);
        }
        controller.close();
      },
    });
    return { stream };
  },
});
const tools = {
  weather: tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
    needsApproval: true,
    execute: async ({ city }) => ({ city, forecast: 'sunny' }),
  }),
};
const run = async (chatId, abortSignal) =>
  streamText({ model, tools, stopWhen: stepCountIs(5), messages: await ledger.modelMessages(chatId), abortSignal });

// --- the routes (what a Next.js app puts in app/api/chat/...) ---------------------
async function POST(request) {
  const { id, messages } = await request.json();
  const { continuation, messages: stored } = await ledger.receive(id, messages);
  const abortController = new AbortController(); // aborted when the answer is stopped in chatledger
  const result = await run(id, abortController.signal);
  const stream = ledger.persist(id, result.toUIMessageStream({ originalMessages: stored }), {
    continuation,
    abortController,
  });
  return createUIMessageStreamResponse({ stream });
}
// The page's stop button: stop the answer for every page, and the model.
const stopPOST = async id => Response.json(await ledger.stop(id, 'stopped from the page'));
const resumeGET = id => ledger.resume(id);
const messagesGET = async id => Response.json({ messages: await ledger.messages(id) });

// Approvals given elsewhere (chatledger's CLI, inbox page, API): this owner's requests.
const stopping = new AbortController();
ledger.continuations(
  async request => {
    const stored = await ledger.messages(request.chatId);
    const result = await run(request.chatId);
    await ledger.store(request.chatId, result.toUIMessageStream({ originalMessages: stored }), {
      continuation: true,
      idempotencyKey: `continuation:${request.requestId}`,
    });
  },
  { signal: stopping.signal, waitSeconds: 1 },
);

// --- node:http <-> fetch Request/Response --------------------------------------------
async function route(request) {
  const { pathname } = new URL(request.url);
  let match;
  if (request.method === 'POST' && pathname === '/api/chat') return POST(request);
  if (request.method === 'GET' && (match = pathname.match(/^\/api\/chat\/(.+)\/stream$/))) {
    return resumeGET(decodeURIComponent(match[1]));
  }
  if (request.method === 'GET' && (match = pathname.match(/^\/api\/chats\/(.+)\/messages$/))) {
    return messagesGET(decodeURIComponent(match[1]));
  }
  if (request.method === 'POST' && (match = pathname.match(/^\/api\/chat\/(.+)\/stop$/))) {
    return stopPOST(decodeURIComponent(match[1]));
  }
  if (request.method === 'POST' && pathname === '/__gate') {
    openGate();
    gate = new Promise(resolve => (openGate = resolve));
    return new Response(null, { status: 204 });
  }
  return new Response('not found', { status: 404 });
}

const server = http.createServer(async (req, res) => {
  const body = [];
  for await (const piece of req) body.push(piece);
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers: req.headers,
    body: body.length ? Buffer.concat(body) : undefined,
  });
  let response;
  try {
    response = await route(request);
  } catch (error) {
    console.error(error);
    response = Response.json({ error: String(error?.message ?? error) }, { status: 500 });
  }
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body == null) return res.end();
  const reader = response.body.getReader();
  res.on('close', () => reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // the browser went away: its copy is cancelled, the answer is still stored
  }
  res.end();
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: server.address().port })));
process.on('SIGTERM', () => {
  stopping.abort();
  server.close();
  process.exit(0);
});
