/**
 * Persisting an answer while it streams: the chunks go to chatledger
 * (`POST /api/chats/{id}/answers`, one streamed request body) and, unchanged,
 * back to the caller (the browser).
 */

import { type AnswerReport, type LedgerHttp, answerOf, chatPath } from './ledger.js';
import { type Chunk, fromSse, toSse, UI_MESSAGE_STREAM_HEADERS } from './sse.js';

/** How an answer is persisted. */
export interface PersistOptions {
  /** The continuation of the last assistant message (after approvals or tool outputs). */
  continuation?: boolean;
  /** Names the answer: a retry with the same key is written once (default: a new UUID). */
  idempotencyKey?: string;
  /**
   * The id of a new assistant message when the stream's `start` chunk has none
   * (default: a new UUID), so the browser and chatledger agree on it.
   */
  messageId?: string;
  /** Aborted when the answer is stopped in chatledger (`POST /api/chats/{id}/stop`): give it to `streamText`. */
  abortController?: AbortController;
  /** Called with chatledger's report once the answer is stored. */
  onStored?: (report: AnswerReport) => void;
  /** Called when the answer could not be stored (default: logged with `console.error`). */
  onError?: (error: unknown) => void;
}

/** The writes in flight of this process, per conversation (so what follows waits for them). */
export class Writes {
  private readonly inFlight = new Map<string, Set<Promise<unknown>>>();

  /** Track `write` for `chatId` until it settles. */
  track(chatId: string, write: Promise<unknown>): void {
    const set = this.inFlight.get(chatId) ?? new Set();
    this.inFlight.set(chatId, set);
    set.add(write);
    const done = () => {
      set.delete(write);
      if (set.size === 0) this.inFlight.delete(chatId);
    };
    write.then(done, done);
  }

  /** Wait until the writes of `chatId` started before this call are stored (or failed). */
  async settled(chatId: string): Promise<void> {
    await Promise.allSettled([...(this.inFlight.get(chatId) ?? [])]);
  }
}

/** A `start` chunk without `messageId` gets `messageId`. */
function namingStart<T extends Chunk>(messageId: string | undefined): TransformStream<T, T> {
  return new TransformStream({
    transform(chunk, controller) {
      const named =
        chunk.type === 'start' && chunk.messageId == null && messageId != null
          ? ({ ...chunk, messageId } as T)
          : chunk;
      controller.enqueue(named);
    },
  });
}

/**
 * The browser's copy of a tee: cancelling it returns at once (a tee branch's
 * cancel waits for the other branch, chatledger's, to end) and leaves the answer
 * to be read to its end for chatledger.
 */
function detached<T>(branch: ReadableStream<T>): ReadableStream<T> {
  const reader = branch.getReader();
  return new ReadableStream<T>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Store `stream` in chatledger as it is produced; returns the same chunks for
 * the browser, and the report's promise.
 *
 * The browser's copy can be cancelled (the page closes, `stop()`): the answer
 * is still read to its end and stored, so a resume replays it whole.
 */
export function persistChunks<T extends Chunk>(
  http: LedgerHttp,
  writes: Writes,
  chatId: string,
  stream: ReadableStream<T>,
  options: PersistOptions = {},
): { stream: ReadableStream<T>; stored: Promise<AnswerReport> } {
  const messageId = options.continuation ? undefined : (options.messageId ?? crypto.randomUUID());
  const [toBrowser, toLedger] = stream.pipeThrough(namingStart<T>(messageId)).tee();
  const query = options.continuation ? '?continuation=true' : '';
  const stored = http
    .fetch(chatPath(chatId, `/answers${query}`), {
      method: 'POST',
      body: toSse(toLedger as ReadableStream<Chunk>),
      duplex: 'half',
      headers: {
        'content-type': 'text/event-stream',
        'idempotency-key': options.idempotencyKey ?? crypto.randomUUID(),
      },
    })
    .then(answerOf) as Promise<AnswerReport>;
  writes.track(chatId, stored);
  stored.then(
    report => {
      if (report.closedElsewhere) options.abortController?.abort(new Error(report.reason ?? 'stopped'));
      options.onStored?.(report);
    },
    error => (options.onError ?? (e => console.error('chatledger: the answer was not stored', e)))(error),
  );
  return { stream: detached(toBrowser), stored };
}

/** The same for a UI-message stream `Response` (`toUIMessageStreamResponse()`): a Response for the browser. */
export function persistResponse(
  http: LedgerHttp,
  writes: Writes,
  chatId: string,
  response: Response,
  options: PersistOptions = {},
): { response: Response; stored: Promise<AnswerReport> } {
  if (response.body == null) throw new TypeError('the response has no body to persist');
  const chunks = fromSse(response.body);
  const { stream, stored } = persistChunks(http, writes, chatId, chunks, options);
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) headers.set(name, value);
  return { response: new Response(toSse(stream), { status: response.status, headers }), stored };
}
