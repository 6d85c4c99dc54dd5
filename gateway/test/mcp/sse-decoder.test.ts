import type { EventSourceMessage } from 'eventsource-parser';
import { SseDecoder } from '../../src/mcp/sse-decoder';

function decodeAll(chunks: Buffer[], maxBytes?: number): { events: EventSourceMessage[]; accepted: boolean[] } {
  const events: EventSourceMessage[] = [];
  const decoder = new SseDecoder((event) => events.push(event), maxBytes);
  return { events, accepted: chunks.map((chunk) => decoder.feed(chunk)) };
}

/** `text` as UTF-8, cut into pieces at the given byte offsets. */
function cut(text: string, ...offsets: number[]): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const edges = [0, ...offsets, bytes.length];
  return edges.slice(1).map((end, i) => bytes.subarray(edges[i], end));
}

describe('SseDecoder', () => {
  it('decodes whole events, in one chunk or split anywhere between lines', () => {
    const text = 'event: message\ndata: {"a":1}\n\nevent: message\ndata: {"b":2}\n\n';
    expect(decodeAll(cut(text)).events.map((e) => e.data)).toEqual(['{"a":1}', '{"b":2}']);
    expect(decodeAll(cut(text, 5, 20, 31)).events.map((e) => e.data)).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('keeps a multi-byte character whole when a chunk ends inside it, for the rest of the stream too', () => {
    const text = 'data: {"text":"Grüße, 東京 🚀"}\n\ndata: {"text":"é"}\n\n';
    const bytes = Buffer.from(text, 'utf8');
    // Every cut point, including those inside the two-, three- and four-byte characters.
    for (let at = 1; at < bytes.length; at += 1) {
      expect(decodeAll(cut(text, at)).events.map((e) => e.data)).toEqual(['{"text":"Grüße, 東京 🚀"}', '{"text":"é"}']);
    }
  });

  it('drops a UTF-8 byte-order mark at the start, whole or split', () => {
    const text = '\uFEFFdata: {"first":true}\n\n';
    expect(decodeAll(cut(text)).events.map((e) => e.data)).toEqual(['{"first":true}']);
    expect(decodeAll(cut(text, 1)).events.map((e) => e.data)).toEqual(['{"first":true}']);
    expect(decodeAll(cut(text, 3)).events.map((e) => e.data)).toEqual(['{"first":true}']);
  });

  it('does not count keep-alive comments between events, however many arrive', () => {
    const keepAlives = Array.from({ length: 40 }, () => Buffer.from(': keep-alive\n\n'));
    const { events, accepted } = decodeAll([...keepAlives, Buffer.from('data: {"a":1}\n\n'), ...keepAlives], 64);
    expect(accepted.every(Boolean)).toBe(true);
    expect(events.map((e) => e.data)).toEqual(['{"a":1}']);
  });

  it('counts a comment that arrives inside an unfinished line, which it extends, so the limit still holds', () => {
    expect(decodeAll([Buffer.from('data: x'), Buffer.from(`: ${'p'.repeat(100)}\n`)], 64).accepted).toEqual([true, false]);
  });

  it('does not count whole comment lines between the data lines of one event (the parser drops them), but counts the event', () => {
    const dataLine = Buffer.from('data: 0123456789\n'); // 17 bytes
    const pings = Array.from({ length: 10 }, () => Buffer.from(': ping\n'));
    const within = decodeAll([dataLine, ...pings, dataLine, ...pings, dataLine, Buffer.from('\n')], 64);
    expect(within.accepted.every(Boolean)).toBe(true);
    expect(within.events.map((e) => e.data)).toEqual(['0123456789\n0123456789\n0123456789']);
    expect(decodeAll([dataLine, ...pings, dataLine, ...pings, dataLine, dataLine], 64).accepted.at(-1)).toBe(false);
  });

  it('refuses an event still unfinished after the byte limit', () => {
    const { events, accepted } = decodeAll(cut(`data: ${'x'.repeat(100)}`, 50), 64);
    expect(accepted).toEqual([true, false]);
    expect(events).toEqual([]);
  });
});
