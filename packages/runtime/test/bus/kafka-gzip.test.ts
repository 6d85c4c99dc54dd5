import { gunzipSync, gzipSync } from 'node:zlib';
import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { createKafkaBus } from '../../src/bus';
import { silentLogger } from './bus-contract';

interface Codec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

const batch = Buffer.from(JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ id: i, gateway: 'gw', server: 'srv', name: 'Ana Łukasiewicz' }))));

describe('the Kafka bus gzip codec', () => {
  let codec: Codec;
  beforeAll(() => {
    // Creating a bus installs the codec; no connection is made until something is published or subscribed.
    void createKafkaBus({ brokers: ['127.0.0.1:1'], clientId: 'gzip-codec', topicPrefix: 'unused.', logger: silentLogger });
    codec = CompressionCodecs[CompressionTypes.GZIP]() as Codec;
  });

  it('replaces the thread-pool codec kafkajs ships', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const shipped = require('kafkajs/src/protocol/message/compression/gzip') as Codec;
    expect(codec).not.toBe(shipped);
    expect(typeof codec.compress).toBe('function');
  });

  it('writes standard gzip that any Kafka client can read, and smaller than the input', async () => {
    const compressed = await codec.compress({ buffer: batch });
    expect(compressed.length).toBeLessThan(batch.length / 4);
    expect(gunzipSync(compressed).equals(batch)).toBe(true);
  });

  it('reads standard gzip written by other clients', async () => {
    expect((await codec.decompress(gzipSync(batch, { level: 9 }))).equals(batch)).toBe(true);
  });

  it('rejects a corrupt payload instead of returning garbage', async () => {
    const corrupt = gzipSync(batch);
    corrupt[corrupt.length - 6] ^= 0xff; // the CRC-32 in the gzip trailer
    await expect(codec.decompress(corrupt)).rejects.toThrow();
  });
});
