import { constants, gzipSync, unzipSync } from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';

/**
 * kafkajs's gzip codec compresses and decompresses through node's asynchronous zlib (libuv's thread pool). For the
 * bus's payloads (a batch of call records is 50-250 KiB) that costs two to three times the CPU of doing the same on
 * the event loop (five times and more to decompress), and takes no less of the event loop's own time: every 16 KiB
 * chunk is a round trip to a pool thread and back, each a cross-thread wake-up, expensive on virtual machines
 * (docs/performance.md, "The bus's gzip"). This codec does the work in place, compressing at level 1: batches of
 * records repeat the same names and ids, which the fastest level shrinks almost as far as the default (5.9-fold
 * against 6.1 on a batch of records) in about half the time.
 */
const inlineGzip = {
  compress: async (encoder: { buffer: Buffer }): Promise<Buffer> => gzipSync(encoder.buffer, { level: constants.Z_BEST_SPEED }),
  decompress: async (buffer: Buffer): Promise<Buffer> => unzipSync(buffer),
};

let installed = false;

/** Makes kafkajs use `inlineGzip` (its codecs are one registry per process, shared by every client). */
export function installInlineGzip(): void {
  if (installed) return;
  CompressionCodecs[CompressionTypes.GZIP] = () => inlineGzip;
  installed = true;
}
