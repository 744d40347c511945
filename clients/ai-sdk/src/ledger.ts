/**
 * `ChatLedger`: a `chatledger serve` seen from a Node server that runs the
 * model (`streamText`) itself. Every call is one HTTP request with the
 * server's bearer token; its tenant and user are the token's.
 */

import type { Chunk } from './sse.js';

/** A UI message (`UIMessage` of the `ai` package), as JSON. */
export type Message = {
  id: string;
  role: 'system' | 'user' | 'assistant';
  parts: Array<{ type: string; [key: string]: unknown }>;
  metadata?: unknown;
};

/** How to reach chatledger, and who this server is to it. */
export interface ChatLedgerOptions {
  /** The base URL of `chatledger serve`, e.g. `http://127.0.0.1:8000`. */
  url: string;
  /** A token of `chatledger serve` (`TOKEN=TENANT[:USER]` in its token file). */
  token?: string;
  /**
   * The owner the conversations this server starts get (e.g. `client:my-app`):
   * their continuation requests are this server's to take
   * (`continuations()`), and chatledger's own responder never answers them.
   */
  owner: string;
  /** The AI SDK major the conversations speak (7, or 6 for apps on `ai@6`; default 7). */
  aiSdk?: 6 | 7;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** A continuation request claimed for this owner (`POST /api/continuations/claim`). */
export interface ContinuationRequest {
  chatId: string;
  requestId: string;
  messageId: string;
  cause: string;
  requestedAt: string;
  owner: string;
  claimedBy: string | null;
  leaseUntil: string | null;
}

/** What chatledger made of an answer (`POST /api/chats/{id}/answers`). */
export interface AnswerReport {
  chatId: string;
  streamId: string;
  messageId: string;
  answerKey: string | null;
  /** A retry of an answer already written with this key (nothing written again). */
  duplicate: boolean;
  /** `finished`, `interrupted`, `aborted` (stopped) or `errored`. */
  outcome: string;
  reason: string | null;
  /** The stream was closed by someone else (a stop): the model can stop too. */
  closedElsewhere?: boolean;
  chunks?: { received: number; applied: number; replays: number; refused: number };
  position?: number | null;
  refused?: Array<{ position: number; chunkType: string; error: string; reason: string }>;
  continuationRequest?: string | null;
  status?: Record<string, unknown>;
}

/** A request chatledger refused: its HTTP status, error type and message. */
export class ChatLedgerError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(`chatledger ${status} ${type}: ${message}`);
    this.name = 'ChatLedgerError';
  }
}

/** The HTTP calls, one per chatledger route (no state but the options). */
export class LedgerHttp {
  readonly url: string;
  readonly owner: string;
  readonly aiSdk: 6 | 7;
  private readonly token?: string;
  private readonly fetcher: typeof globalThis.fetch;

  constructor(options: ChatLedgerOptions) {
    if (!options.owner) throw new TypeError("ChatLedger needs an 'owner', e.g. 'client:my-app'");
    this.url = options.url.replace(/\/+$/, '');
    this.owner = options.owner;
    this.aiSdk = options.aiSdk ?? 7;
    this.token = options.token;
    this.fetcher = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** The authorization header (and more). */
  headers(more: Record<string, string> = {}): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}`, ...more } : more;
  }

  /** `fetch` a chatledger path as this server. */
  fetch(path: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<Response> {
    const headers = this.headers((init.headers as Record<string, string>) ?? {});
    return this.fetcher(`${this.url}${path}`, { ...init, headers } as RequestInit);
  }

  /** A JSON request; the parsed answer (null for 204), or ChatLedgerError. */
  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const response = await this.fetch(path, {
      method,
      signal,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    return (await answerOf(response)) as T;
  }
}

/** Path of a conversation's route. */
export function chatPath(chatId: string, rest = ''): string {
  return `/api/chats/${encodeURIComponent(chatId)}${rest}`;
}

/** The JSON of a chatledger answer, or its error as ChatLedgerError. */
export async function answerOf(response: Response): Promise<unknown> {
  if (response.status === 204) return null;
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const error = (parsed as { error?: { type?: string; message?: string } } | null)?.error;
    throw new ChatLedgerError(response.status, error?.type ?? 'HTTPError', error?.message ?? text);
  }
  return parsed;
}

export type { Chunk };
