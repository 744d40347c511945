// The README's route handlers, type-checked against the real `ai` types
// (`npm run typecheck`; the end-to-end server, test/e2e/server.mjs, runs the same code).
import { createUIMessageStreamResponse, stepCountIs, streamText, type LanguageModel, type ToolSet, type UIMessage } from 'ai';
import { ChatLedger } from '../src/index.js';

declare const model: LanguageModel;
declare const tools: ToolSet;
declare const env: Record<string, string>;

const ledger = new ChatLedger({
  url: env.CHATLEDGER_URL, // http://127.0.0.1:8000: `chatledger serve`
  token: env.CHATLEDGER_TOKEN,
  owner: 'client:my-app', // this app continues its chats; chatledger's responder never does
});

// app/api/chat/route.ts
export async function POST(request: Request): Promise<Response> {
  const { id, messages }: { id: string; messages: UIMessage[] } = await request.json();
  const { continuation, messages: stored } = await ledger.receive(id, messages);
  const abortController = new AbortController(); // aborted by a stop in chatledger
  const result = streamText({
    model, tools, stopWhen: stepCountIs(5), messages: await ledger.modelMessages(id),
    abortSignal: abortController.signal,
  });
  const stream = ledger.persist(id, result.toUIMessageStream({ originalMessages: stored }), { continuation, abortController });
  return createUIMessageStreamResponse({ stream });
}

// app/api/chat/[id]/stop/route.ts
export async function STOP(_: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return Response.json(await ledger.stop((await params).id, 'stopped from the page'));
}

// app/api/chat/[id]/stream/route.ts
export async function GET(_: Request, { params }: { params: Promise<{ id: string }> }): Promise<Response> {
  return ledger.resume((await params).id);
}

// The same with the Response of toUIMessageStreamResponse, and with its consumeSseStream hook.
export async function POSTResponse(id: string): Promise<Response> {
  const result = streamText({ model, messages: await ledger.modelMessages(id) });
  return ledger.persistResponse(id, result.toUIMessageStreamResponse());
}
export async function POSTHook(id: string): Promise<Response> {
  const result = streamText({ model, messages: await ledger.modelMessages(id) });
  return result.toUIMessageStreamResponse({
    generateMessageId: () => crypto.randomUUID(),
    consumeSseStream: ledger.consumeSseStream(id),
  });
}

// A worker (or the same server): the approvals given elsewhere, continued here.
export function continueElsewhereApprovals(signal: AbortSignal): Promise<void> {
  return ledger.continuations(
    async request => {
      const stored = await ledger.messages<UIMessage>(request.chatId);
      const result = streamText({ model, tools, stopWhen: stepCountIs(5), messages: await ledger.modelMessages(request.chatId) });
      await ledger.store(request.chatId, result.toUIMessageStream({ originalMessages: stored }), {
        continuation: true,
        idempotencyKey: `continuation:${request.requestId}`,
      });
    },
    { signal },
  );
}
