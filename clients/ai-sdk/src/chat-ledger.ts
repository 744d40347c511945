/**
 * `ChatLedger`: chatledger as the store of an AI SDK server (a Next.js route
 * handler, any Node server) that runs the model itself.
 */

import {
  type AnswerReport,
  type ChatLedgerOptions,
  type ContinuationRequest,
  type Message,
  ChatLedgerError,
  LedgerHttp,
  answerOf,
  chatPath,
} from './ledger.js';
import { type PersistOptions, Writes, persistChunks, persistResponse } from './persist.js';
import { type Chunk, UI_MESSAGE_STREAM_HEADERS, fromSse } from './sse.js';

/** What `receive` recorded of a request from the browser. */
export interface Received<M extends Message = Message> {
  /** The browser answered approvals or tool calls: stream the continuation (`persist(..., {continuation: true})`). */
  continuation: boolean;
  /** The conversation's messages as stored now (`originalMessages` of `toUIMessageStream`). */
  messages: M[];
}

/** How to take continuation requests (`continuations`). */
export interface ContinuationOptions {
  /** Stops the loop (and the claim waiting). */
  signal?: AbortSignal;
  /** How long one claim waits for a request (seconds, up to 30; default 25). */
  waitSeconds?: number;
  /** How long a claim holds the request before another worker may take it (seconds). */
  leaseSeconds?: number;
  /** This worker's name in the audit (default: chatledger's `<owner>:<user>`). */
  worker?: string;
  /** Called when a claim or the handler fails (default: `console.error`); the loop goes on. */
  onError?: (error: unknown) => void;
}

const TOOL_ANSWERED = new Set(['output-available', 'output-error']);

/** A chatledger server seen by one AI SDK server (its token, its owner name). */
export class ChatLedger {
  readonly http: LedgerHttp;
  private readonly writes = new Writes();

  constructor(options: ChatLedgerOptions) {
    this.http = new LedgerHttp(options);
  }

  /** Start the conversation as this server's (owner, AI SDK major); false if it existed. */
  async startChat(chatId: string, options: { metadata?: Record<string, unknown> } = {}): Promise<boolean> {
    const body = { id: chatId, owner: this.http.owner, aiSdk: this.http.aiSdk, ...options };
    return (await this.http.json<{ created: boolean }>('POST', '/api/chats', body)).created;
  }

  /** Append a whole message (the user's); the same message again records nothing. */
  async appendMessage(chatId: string, message: Message): Promise<boolean> {
    const answer = await this.http.json<{ changed: boolean }>('POST', chatPath(chatId, '/messages'), { message });
    return answer.changed;
  }

  /** The stored messages (`UIMessage[]`), as `useChat` shows them. */
  async messages<M extends Message = Message>(chatId: string): Promise<M[]> {
    return (await this.http.json<{ messages: M[] }>('GET', chatPath(chatId, '/messages'))).messages;
  }

  /**
   * The model's context for the next `streamText` call (`ModelMessage[]`, equal
   * to the SDK's `convertToModelMessages` of the stored messages).
   */
  async modelMessages(
    chatId: string,
    options: { unanswered?: 'refuse' | 'omit'; ignoreIncompleteToolCalls?: boolean } = {},
  ): Promise<any[]> {
    const query = new URLSearchParams({ format: 'ai-sdk' });
    if (options.unanswered) query.set('unanswered', options.unanswered);
    if (options.ignoreIncompleteToolCalls) query.set('ignoreIncompleteToolCalls', 'true');
    const path = chatPath(chatId, `/model-messages?${query}`);
    return (await this.http.json<{ messages: any[] }>('GET', path)).messages;
  }

  /** Where the turn stands (`idle`, `streaming`, `awaiting-approval`, ...), its owner, its request. */
  async status(chatId: string): Promise<Record<string, any>> {
    return this.http.json('GET', chatPath(chatId, '/status'));
  }

  /** Record an approval decision (audited as this server's user). */
  async respondToApproval(
    chatId: string,
    answer: { approvalId: string; approved: boolean; reason?: string; autoContinue?: boolean },
  ): Promise<Record<string, any>> {
    return this.http.json('POST', chatPath(chatId, '/approvals'), answer);
  }

  /** Record a tool call's output (or its error). */
  async addToolOutput(
    chatId: string,
    answer: { toolCallId: string; output?: unknown; errorText?: string; autoContinue?: boolean },
  ): Promise<Record<string, any>> {
    return this.http.json('POST', chatPath(chatId, '/tool-outputs'), answer);
  }

  /** Stop the answer being written (its stream closes `aborted`; `persist`'s abortController fires). */
  async stop(chatId: string, reason?: string): Promise<{ stopped: boolean }> {
    return this.http.json('POST', chatPath(chatId, '/stop'), reason ? { reason } : {});
  }

  /**
   * Record what the browser sent (`useChat`'s request body `messages`): start
   * the conversation if it is new, then either the new user message, or the
   * approvals and tool outputs the browser gave on the last assistant message.
   * Answers written by this process for the chat are stored first (and, for
   * approvals, an answer another instance writes is waited for, up to 15 s).
   */
  async receive<M extends Message>(chatId: string, messages: M[]): Promise<Received<M>> {
    const last = messages.at(-1);
    if (last == null) throw new TypeError('receive: the request holds no messages');
    await this.startChat(chatId);
    await this.writes.settled(chatId);
    if (last.role === 'user') {
      await this.appendMessage(chatId, last);
      return { continuation: false, messages: await this.messages<M>(chatId) };
    }
    await this.answerStored(chatId);
    const stored = (await this.messages(chatId)).find(m => m.id === last.id);
    if (stored == null) {
      throw new ChatLedgerError(404, 'MessageNotFoundError', `message ${last.id} is not stored in chat ${chatId}`);
    }
    let answered = false;
    for (const part of last.parts) {
      const call = part.toolCallId as string | undefined;
      if (call == null) continue;
      const before = stored.parts.find(p => p.toolCallId === call);
      const approval = part.approval as { id: string; approved: boolean; reason?: string } | undefined;
      if (part.state === 'approval-responded' && before?.state === 'approval-requested' && approval) {
        await this.respondToApproval(chatId, {
          approvalId: approval.id, approved: approval.approved, reason: approval.reason, autoContinue: false,
        });
        answered = true;
      } else if (TOOL_ANSWERED.has(part.state as string) && before?.state === 'input-available') {
        await this.addToolOutput(chatId, {
          toolCallId: call, autoContinue: false,
          ...(part.state === 'output-error' ? { errorText: String(part.errorText) } : { output: part.output }),
        });
        answered = true;
      }
    }
    const status = answered ? await this.status(chatId) : { status: 'idle' };
    return { continuation: status.status === 'ready-to-continue', messages: await this.messages<M>(chatId) };
  }

  /**
   * Wait (up to `seconds`) until no answer streams into `chatId`: the page
   * answers a message as soon as it has it, and the answer may still be
   * closing in chatledger (written by another instance of the app).
   */
  private async answerStored(chatId: string, seconds = 15): Promise<void> {
    const deadline = Date.now() + seconds * 1000;
    while ((await this.status(chatId)).status === 'streaming' && Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, 25));
    }
  }

  /**
   * Store a `UIMessageStream` (`streamText(...).toUIMessageStream()`) in
   * chatledger while handing the same chunks back (for
   * `createUIMessageStreamResponse({ stream })`). Every chunk is stored as it
   * comes; browsers following the chat (`resume`) see it live.
   */
  persist<T extends Chunk>(chatId: string, stream: ReadableStream<T>, options?: PersistOptions): ReadableStream<T> {
    return persistChunks<T>(this.http, this.writes, chatId, stream, options).stream;
  }

  /** `persist` for the Response of `toUIMessageStreamResponse()`: the Response to return. */
  persistResponse(chatId: string, response: Response, options?: PersistOptions): Response {
    return persistResponse(this.http, this.writes, chatId, response, options).response;
  }

  /**
   * A `consumeSseStream` for `toUIMessageStreamResponse({ consumeSseStream })`:
   * stores the copy of the SSE stream the SDK gives it. Give `streamText`'s
   * `toUIMessageStreamResponse` a `generateMessageId` (or `originalMessages`),
   * so the browser and chatledger get the same message id.
   */
  consumeSseStream(chatId: string, options?: PersistOptions): (arg: { stream: ReadableStream<string> }) => Promise<void> {
    return async ({ stream }) => {
      await this.store(chatId, fromSse(stream), options);
    };
  }

  /** Store a whole answer nobody watches (a continuation run by `continuations`); its report. */
  async store(chatId: string, stream: ReadableStream<Chunk>, options?: PersistOptions): Promise<AnswerReport> {
    const persisted = persistChunks(this.http, this.writes, chatId, stream, { onError: () => {}, ...options });
    await persisted.stream.pipeTo(new WritableStream());
    return persisted.stored;
  }

  /**
   * The body of the resume route (`GET /api/chat/[id]/stream`): the answer
   * being written, replayed from its start then live, from chatledger; 204
   * when none is being written.
   */
  async resume(chatId: string, init: { signal?: AbortSignal } = {}): Promise<Response> {
    const response = await this.http.fetch(`/api/chat/${encodeURIComponent(chatId)}/stream`, {
      signal: init.signal,
    });
    if (response.status === 204) return new Response(null, { status: 204 });
    if (!response.ok) await answerOf(response);
    return new Response(response.body, { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
  }

  /** Claim the oldest continuation request this owner may continue, waiting up to `waitSeconds`; null if none came. */
  async claimContinuation(
    options: { waitSeconds?: number; leaseSeconds?: number; worker?: string; chatId?: string; signal?: AbortSignal } = {},
  ): Promise<ContinuationRequest | null> {
    const { signal, ...rest } = options;
    const body = { owner: this.http.owner, ...rest };
    const answer = await this.http.json<{ request: ContinuationRequest } | null>(
      'POST', '/api/continuations/claim', body, signal,
    );
    return answer?.request ?? null;
  }

  /** Retire the pending continuation request: this owner continued the turn by its own means. */
  async retireContinuation(chatId: string, reason: string): Promise<string | null> {
    return (await this.http.json<{ retired: string | null }>(
      'POST', chatPath(chatId, '/continuations/retire'), { reason },
    )).retired;
  }

  /**
   * Take this owner's continuation requests until `signal` aborts: each one
   * claimed (with a lease) is given to `handler`, which streams the
   * continuation in (`store(chatId, stream, { continuation: true })`). An
   * approval given anywhere (the chatledger CLI, its inbox page, another
   * server) is continued here.
   */
  async continuations(
    handler: (request: ContinuationRequest) => Promise<unknown>,
    options: ContinuationOptions = {},
  ): Promise<void> {
    const { signal, onError = (e: unknown) => console.error('chatledger: continuation', e) } = options;
    while (!signal?.aborted) {
      let request: ContinuationRequest | null;
      try {
        request = await this.claimContinuation({
          waitSeconds: options.waitSeconds ?? 25, leaseSeconds: options.leaseSeconds,
          worker: options.worker, signal,
        });
      } catch (error) {
        if (signal?.aborted) return;
        onError(error);
        await new Promise(resolve => setTimeout(resolve, 1000));
        continue;
      }
      if (request == null) continue;
      try {
        await handler(request);
      } catch (error) {
        onError(error);
      }
    }
  }
}
