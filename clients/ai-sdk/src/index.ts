/**
 * `@chatledger/ai-sdk`: chatledger as the store of an AI SDK server (`ai@7`, or `ai@6`).
 *
 * ```ts
 * const ledger = new ChatLedger({ url, token, owner: 'client:my-app' });
 * ```
 * See the package README for a complete Next.js route handler.
 */

export { ChatLedger } from './chat-ledger.js';
export type { ContinuationOptions, Received } from './chat-ledger.js';
export { ChatLedgerError } from './ledger.js';
export type { AnswerReport, ChatLedgerOptions, ContinuationRequest, Message } from './ledger.js';
export type { PersistOptions } from './persist.js';
export { DONE, UI_MESSAGE_STREAM_HEADERS, fromSse, toSse } from './sse.js';
export type { Chunk } from './sse.js';
