/**
 * The UI-message stream on the wire: Server-Sent Events of `data: <chunk JSON>`,
 * ending with `data: [DONE]` (what `toUIMessageStreamResponse()` sends and
 * what chatledger's `POST /api/chats/{id}/answers` reads).
 */

/** A UI-message chunk (`UIMessageChunk` of the `ai` package), as JSON. */
export type Chunk = { type: string; [key: string]: unknown };

/** The headers of a UI-message stream response (as the AI SDK sends them). */
export const UI_MESSAGE_STREAM_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

const encoder = new TextEncoder();

/** One SSE event of `chunk`. */
export function frame(chunk: Chunk): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);
}

/** The last event of a UI-message stream. */
export const DONE: Uint8Array = encoder.encode('data: [DONE]\n\n');

/** Chunks -> SSE bytes, ending with `[DONE]` when the chunks end (not when they fail). */
export function toSse(chunks: ReadableStream<Chunk>): ReadableStream<Uint8Array> {
  return chunks.pipeThrough(
    new TransformStream<Chunk, Uint8Array>({
      transform: (chunk, controller) => controller.enqueue(frame(chunk)),
      flush: controller => controller.enqueue(DONE),
    }),
  );
}

/**
 * SSE bytes (or strings) -> chunks: each event's `data` lines, parsed; `[DONE]`
 * ends the chunks. Events may be cut anywhere between pieces.
 */
export function fromSse(body: ReadableStream<Uint8Array | string>): ReadableStream<Chunk> {
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
  const emit = (event: string, controller: TransformStreamDefaultController<Chunk>) => {
    const data = event
      .split(/\r?\n/)
      .filter(line => line.startsWith('data:'))
      .map(line => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (data === '' || done) return;
    if (data === '[DONE]') {
      done = true;
      return;
    }
    controller.enqueue(JSON.parse(data) as Chunk);
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array | string, Chunk>({
      transform(piece, controller) {
        buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
        let end: number;
        while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
          emit(event, controller);
        }
      },
      flush(controller) {
        buffer += decoder.decode();
        if (buffer.trim()) emit(buffer, controller);
      },
    }),
  );
}
