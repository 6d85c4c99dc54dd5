/** The most of each captured payload (request, response) a call record keeps: 16 KiB of UTF-8. */
export const CALL_PAYLOAD_CAP_BYTES = 16 * 1024;

export interface CappedText {
  text: string;
  truncated: boolean;
}

const encoder = new TextEncoder();
// One scratch buffer reused by every call (the event loop is single-threaded); only its length matters.
let scratch = new Uint8Array(CALL_PAYLOAD_CAP_BYTES);

/**
 * The start of `text` that fits in `capBytes` of UTF-8, never cutting a character in two. Cheap for short
 * text (no encoding at all when even 3 bytes per UTF-16 unit would fit).
 */
export function capUtf8(text: string, capBytes = CALL_PAYLOAD_CAP_BYTES): CappedText {
  if (text.length * 3 <= capBytes) return { text, truncated: false };
  if (scratch.length !== capBytes) scratch = new Uint8Array(capBytes);
  const { read } = encoder.encodeInto(text, scratch);
  return read >= text.length ? { text, truncated: false } : { text: text.slice(0, read), truncated: true };
}
