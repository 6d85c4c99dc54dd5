import { randomUUID } from 'node:crypto';
import { createCallRecorder, type McpCallBatchData } from '@platform/gateway';
import { callRecordsDropped, parseDomainEvent, type EventBus, type ReceivedMessage } from '@platform/runtime';
import { eventually, memoryLogger } from '@platform/test';
import { callEvent, collectCalls, isolatedBus, switchableBus } from './fixtures';

const CAP = 16 * 1024;
// Long enough that a test only sees a batch go out because it filled up or was flushed, never because time passed.
const NEVER = 3_600_000;

async function dropped(reason: string): Promise<number> {
  return (await callRecordsDropped.get()).values.find((value) => value.labels.reason === reason)?.value ?? 0;
}

const groupsOf = (message: ReceivedMessage) => (parseDomainEvent(message.value)!.data as McpCallBatchData).groups;
/** Each call of a batch with what its group shares: the record as the data plane handed it over, plus its id. */
const itemsOf = (message: ReceivedMessage) => groupsOf(message).flatMap(({ context, calls }) => calls.map((call) => ({ ...context, ...call })));

/** The edge's call recorder (gateway/src/mcp/call-recorder.ts) on the real bus: batching, bounds, failures, payload caps. */
describe('call recorder', () => {
  const log = memoryLogger('call-recorder');
  let bus: EventBus;
  let received: Awaited<ReturnType<typeof collectCalls>>;

  beforeAll(async () => {
    bus = isolatedBus(log.logger);
    received = await collectCalls(bus);
  }, 120_000);
  afterAll(async () => {
    await received?.close();
    await bus?.close();
  });

  /** The calls received so far for one team, in order, and the bus messages (batches) that carried them. */
  const callsOf = (teamId: string) => received.messages.flatMap(itemsOf).filter((call) => call.teamId === teamId);
  const batchesOf = (teamId: string) => received.messages.filter((message) => itemsOf(message).some((call) => call.teamId === teamId));

  it('publishes a full batch at once as one mcp.call-batch event, each call with its own id, and the rest on flush', async () => {
    const teamId = randomUUID();
    const recorder = createCallRecorder({ bus, logger: log.logger, batchSize: 3, lingerMs: NEVER });
    const calls = [1, 2, 3, 4].map((n) => callEvent(teamId, { exposedName: `tool-${n}` }));
    for (const call of calls.slice(0, 3)) recorder.record(call);

    const firstBatch = await eventually(() => batchesOf(teamId), (batches) => batches.length === 1);
    recorder.record(calls[3]!);
    await recorder.flush();
    const batches = await eventually(() => batchesOf(teamId), (found) => found.length === 2);

    expect(itemsOf(firstBatch[0]!).map((call) => call.exposedName)).toEqual(['tool-1', 'tool-2', 'tool-3']);
    expect(itemsOf(batches.find((found) => found !== firstBatch[0])!).map((call) => call.exposedName)).toEqual(['tool-4']);
    const event = parseDomainEvent(batches[0]!.value)!;
    expect(event).toMatchObject({ type: 'mcp.call-batch', source: 'gateway' });
    expect(event.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(batches[0]!.headers['event-id']).toBe(event.id);
    expect(batches[0]!.headers['event-type']).toBe('mcp.call-batch');
    const { id, ...first } = itemsOf(batches[0]!)[0]!;
    expect(first).toEqual(calls[0]);
    const ids = callsOf(teamId).map((call) => call.id);
    expect(ids.every((callId) => /^[0-9a-f-]{36}$/.test(callId) && callId !== event.id)).toBe(true);
    expect(new Set([...ids, id]).size).toBe(4);
  });

  it('sends what calls share once per batch: one group per team, gateway, server, principal and client', async () => {
    const teamId = randomUUID();
    const recorder = createCallRecorder({ bus, logger: log.logger, batchSize: 6, lingerMs: NEVER });
    const { gateway, server, principal } = callEvent(teamId);
    const shared = { gateway, server, principal };
    const other = { kind: 'user' as const, userId: randomUUID(), displayName: 'Someone Else' };
    const calls = [
      callEvent(teamId, { ...shared, exposedName: 'a1' }),
      callEvent(teamId, { ...shared, exposedName: 'b1', principal: other }),
      // Equal, not the same objects: grouping goes by content.
      callEvent(teamId, { ...structuredClone(shared), exposedName: 'a2' }),
      callEvent(teamId, { ...shared, exposedName: 'c1', clientName: 'another-client' }),
      callEvent(teamId, { ...shared, exposedName: 'a3' }),
      // The same principal object through a renamed gateway (a new object): the new name, never a remembered one.
      callEvent(teamId, { ...shared, gateway: { ...gateway, name: 'Renamed' }, exposedName: 'd1' }),
    ];
    for (const call of calls) recorder.record(call);

    const [batch] = await eventually(() => batchesOf(teamId), (found) => found.length === 1);
    const groups = groupsOf(batch!);
    expect(groups.map((group) => group.calls.map((call) => call.exposedName))).toEqual([['a1', 'a2', 'a3'], ['b1'], ['c1'], ['d1']]);
    expect(groups[1]!.context.principal).toEqual(other);
    expect(groups[2]!.context.clientName).toBe('another-client');
    expect(groups[3]!.context.gateway.name).toBe('Renamed');
    // A call carries only what is its own.
    expect(Object.keys(groups[0]!.calls[0]!).sort()).toEqual(
      ['errorClass', 'exposedName', 'id', 'latencyMs', 'method', 'occurredAt', 'outcome', 'requestBytes', 'requestId', 'responseBytes'],
    );
    // Read back whole, every record is what the data plane handed over.
    expect(itemsOf(batch!).map(({ id: _id, ...call }) => call)).toEqual([calls[0], calls[2], calls[4], calls[1], calls[3], calls[5]]);
  });

  it('publishes a lone record after the linger time without a flush', async () => {
    const teamId = randomUUID();
    const recorder = createCallRecorder({ bus, logger: log.logger, batchSize: 200, lingerMs: 20 });
    recorder.record(callEvent(teamId));
    await eventually(() => callsOf(teamId), (found) => found.length === 1);
  });

  it('sends back to back only full batches: records left behind by a batch wait for the linger time or more records', async () => {
    const teamId = randomUUID();
    const recorder = createCallRecorder({ bus, logger: log.logger, batchSize: 3, lingerMs: NEVER });
    // Five records before the first batch leaves: it takes three, and the two behind it are not a batch yet.
    for (let n = 1; n <= 5; n += 1) recorder.record(callEvent(teamId, { exposedName: `tool-${n}` }));
    await eventually(() => batchesOf(teamId), (batches) => batches.length === 1);

    recorder.record(callEvent(teamId, { exposedName: 'tool-6' }));
    const batches = await eventually(() => batchesOf(teamId), (found) => found.length === 2);
    const names = batches.map((batch) => itemsOf(batch).map((call) => call.exposedName));
    expect(names).toContainEqual(['tool-1', 'tool-2', 'tool-3']);
    expect(names).toContainEqual(['tool-4', 'tool-5', 'tool-6']);
  });

  it('never throws into the caller while publishing throws, and delivers everything once the bus is back', async () => {
    const teamId = randomUUID();
    const failing = switchableBus(bus);
    failing.down = true;
    const recorder = createCallRecorder({ bus: failing.bus, logger: log.logger, batchSize: 2, lingerMs: 5, retry: { initialMs: 5, maxMs: 50 } });

    for (let n = 1; n <= 5; n += 1) expect(() => recorder.record(callEvent(teamId, { exposedName: `tool-${n}` }))).not.toThrow();
    // Several attempts failed (the back-off retries on its own) and nothing got through.
    await eventually(() => failing.attempts, (attempts) => attempts >= 3);
    expect(callsOf(teamId)).toEqual([]);
    expect(log.lines.some((line) => line.msg === 'publishing MCP call records failed; will retry')).toBe(true);

    failing.down = false;
    const delivered = await eventually(() => callsOf(teamId), (found) => found.length === 5);
    // Batches are unkeyed (spread over partitions), so they may arrive in any order: each call once is what counts.
    expect(delivered.map((call) => call.exposedName).sort()).toEqual(['tool-1', 'tool-2', 'tool-3', 'tool-4', 'tool-5']);
  });

  it('keeps the newest records beyond its bound, counting and warning about the dropped ones', async () => {
    const teamId = randomUUID();
    const failing = switchableBus(bus);
    failing.down = true;
    const before = await dropped('buffer_full');
    const warningsBefore = log.lines.filter((line) => line.msg === 'MCP call records dropped').length;
    const recorder = createCallRecorder({
      bus: failing.bus,
      logger: log.logger,
      maxBuffered: 4,
      lingerMs: NEVER,
      retry: { initialMs: NEVER, maxMs: NEVER },
      dropWarningEveryMs: NEVER,
    });

    for (let n = 1; n <= 10; n += 1) recorder.record(callEvent(teamId, { exposedName: `tool-${n}` }));
    expect(await dropped('buffer_full')).toBe(before + 6);
    // One warning however many drops follow it within the warning interval.
    expect(log.lines.filter((line) => line.msg === 'MCP call records dropped').length).toBe(warningsBefore + 1);

    failing.down = false;
    await recorder.flush();
    const delivered = await eventually(() => callsOf(teamId), (found) => found.length === 4);
    expect(delivered.map((call) => call.exposedName)).toEqual(['tool-7', 'tool-8', 'tool-9', 'tool-10']);
  });

  it('gives up on flush when the bus stays down past the deadline, counting the loss, without throwing', async () => {
    const teamId = randomUUID();
    const failing = switchableBus(bus);
    failing.down = true;
    const before = await dropped('shutdown');
    const recorder = createCallRecorder({ bus: failing.bus, logger: log.logger, lingerMs: NEVER, flushTimeoutMs: 100, retry: { initialMs: 10, maxMs: 20 } });
    recorder.record(callEvent(teamId));
    recorder.record(callEvent(teamId));

    await expect(recorder.flush()).resolves.toBeUndefined();
    expect(await dropped('shutdown')).toBe(before + 2);
    expect(log.lines.some((line) => line.msg === 'MCP call records could not be published before shutdown' && line.lost === 2)).toBe(true);

    // The recorder still works afterwards.
    failing.down = false;
    recorder.record(callEvent(teamId, { exposedName: 'after' }));
    await recorder.flush();
    const delivered = await eventually(() => callsOf(teamId), (found) => found.length === 1);
    expect(delivered[0]!.exposedName).toBe('after');
  });

  it('caps each captured payload at 16 KiB of UTF-8 without splitting a character, and marks it truncated', async () => {
    const teamId = randomUUID();
    const recorder = createCallRecorder({ bus, logger: log.logger, lingerMs: NEVER });
    // 'é' is 2 bytes: 10,000 of them (20,000 bytes) are cut to 8,192 whole characters.
    const request = 'é'.repeat(10_000);
    const response = '{"result":"fine"}';
    recorder.record(callEvent(teamId, { exposedName: 'big', payloads: { request, response } }));
    recorder.record(callEvent(teamId, { exposedName: 'cut-upstream', payloads: { request: 'x', response: 'y', responseTruncated: true } }));
    recorder.record(callEvent(teamId, { exposedName: 'uncaptured' }));
    await recorder.flush();

    const delivered = await eventually(() => callsOf(teamId), (found) => found.length === 3);
    const byName = new Map(delivered.map((call) => [call.exposedName, call]));
    const big = byName.get('big')!.payloads!;
    expect(Buffer.byteLength(big.request, 'utf8')).toBe(CAP);
    expect(big.request).toBe('é'.repeat(CAP / 2));
    expect(big).toMatchObject({ response, requestTruncated: true, responseTruncated: false });
    expect(byName.get('cut-upstream')!.payloads).toEqual({ request: 'x', response: 'y', requestTruncated: false, responseTruncated: true });
    expect(byName.get('uncaptured')).not.toHaveProperty('payloads');
  });

  it('drops what it cannot serialise and keeps publishing the rest', async () => {
    const teamId = randomUUID();
    const before = await dropped('invalid');
    const recorder = createCallRecorder({ bus, logger: log.logger, lingerMs: NEVER });
    // A BigInt cannot be written as JSON: a broken record from the data plane must not block the ones after it.
    recorder.record(callEvent(teamId, { exposedName: 'broken', latencyMs: 1n as unknown as number }));
    recorder.record(callEvent(teamId, { exposedName: 'fine' }));
    await recorder.flush();

    const delivered = await eventually(() => callsOf(teamId), (found) => found.length === 1);
    expect(delivered[0]!.exposedName).toBe('fine');
    expect(await dropped('invalid')).toBe(before + 1);
  });
});
