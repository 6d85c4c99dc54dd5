import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';

/** Whether an SSE event carries a message (events named `message`, or unnamed). */
export const isMessageEvent = (event: EventSourceMessage): boolean => event.event === undefined || event.event === 'message';

/**
 * An SSE body's chunks in, its events out as each completes. An event still unfinished after `maxBytes` bytes is a
 * protocol error of the sender: `feed` then answers false and parses nothing more.
 */
export class SseDecoder {
  private pendingBytes = 0;
  private readonly text = new TextDecoder();
  private readonly parser: EventSourceParser;

  constructor(
    onEvent: (event: EventSourceMessage) => void,
    private readonly maxBytes = Infinity,
  ) {
    this.parser = createParser({
      onEvent: (event) => {
        this.pendingBytes = 0;
        onEvent(event);
      },
    });
  }

  feed(chunk: Buffer): boolean {
    this.pendingBytes += chunk.length;
    if (this.pendingBytes > this.maxBytes) return false;
    this.parser.feed(this.text.decode(chunk, { stream: true }));
    return true;
  }
}
