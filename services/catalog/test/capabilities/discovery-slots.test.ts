import type { ServerResponse } from 'node:http';
import { adminClient, eventually, newPerson, newTeam, startRawUpstream, answer, initializeResult, unique, type RawUpstream } from '@platform/test';
import { DiscoverySlots, DiscoverySlotWaitEnded } from '../../src/domain/discovery-slots';
import { capabilityTestbed } from './testbed';

/** A discovery that runs until the test ends it; `started` says whether it began. */
function heldDiscovery() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const state = { started: false, finish, run: () => ((state.started = true), done) };
  return state;
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('DiscoverySlots', () => {
  it('runs at most the given number at once, at most the per-team number of one team, the rest in order of arrival', async () => {
    const slots = new DiscoverySlots(2, 1);
    const never = new AbortController().signal;
    const [a1, a2, b1, c1] = [heldDiscovery(), heldDiscovery(), heldDiscovery(), heldDiscovery()];
    const runs = [slots.run('a', never, a1.run), slots.run('a', never, a2.run), slots.run('b', never, b1.run), slots.run('c', never, c1.run)];
    await settle();
    // a's second waits for a's first; b takes the second slot; c waits for any slot.
    expect([a1.started, a2.started, b1.started, c1.started]).toEqual([true, false, true, false]);

    a1.finish();
    await settle();
    // a's second arrived before c: it takes the freed slot.
    expect([a2.started, c1.started]).toEqual([true, false]);

    b1.finish();
    await settle();
    expect(c1.started).toBe(true);
    a2.finish();
    c1.finish();
    await Promise.all(runs);
  });

  it('lets a later team go past an earlier waiter whose team has no room', async () => {
    const slots = new DiscoverySlots(2, 1);
    const never = new AbortController().signal;
    const [a1, a2, b1] = [heldDiscovery(), heldDiscovery(), heldDiscovery()];
    const runs = [slots.run('a', never, a1.run), slots.run('a', never, a2.run), slots.run('b', never, b1.run)];
    await settle();
    expect([a1.started, a2.started, b1.started]).toEqual([true, false, true]);
    for (const held of [a1, b1]) held.finish();
    await settle();
    expect(a2.started).toBe(true);
    a2.finish();
    await Promise.all(runs);
  });

  it('ends a wait when its signal aborts, runs nothing for it and frees its place', async () => {
    const slots = new DiscoverySlots(1, 1);
    const first = heldDiscovery();
    const running = slots.run('a', new AbortController().signal, first.run);
    const stopped = new AbortController();
    const waiting = heldDiscovery();
    const waited = slots.run('b', stopped.signal, waiting.run);
    const later = heldDiscovery();
    const afterIt = slots.run('c', new AbortController().signal, later.run);
    stopped.abort();
    await expect(waited).rejects.toBeInstanceOf(DiscoverySlotWaitEnded);
    first.finish();
    await running;
    await settle();
    expect([waiting.started, later.started]).toEqual([false, true]);
    later.finish();
    await afterIt;
    // An already aborted signal never waits.
    await expect(slots.run('d', AbortSignal.abort(), async () => 1)).rejects.toBeInstanceOf(DiscoverySlotWaitEnded);
  });

  it('frees the slot when a discovery fails', async () => {
    const slots = new DiscoverySlots(1, 1);
    const never = new AbortController().signal;
    await expect(slots.run('a', never, () => Promise.reject(new Error('upstream gone')))).rejects.toThrow('upstream gone');
    await expect(slots.run('a', never, async () => 'next')).resolves.toBe('next');
  });
});

/**
 * Through the API: one team's refreshes of two servers discover one after the other, while another team's runs
 * beside them (docs/catalog.md, Discovery bounds). The upstream holds every `tools/list` until the test lets it go;
 * which server asked is in the URL's query.
 */
describe('refreshes of one team take turns', () => {
  const testbed = capabilityTestbed();
  let upstream: RawUpstream;
  /** Every request the upstream received, by server label, and the `tools/list` answers it holds. */
  const seen: string[] = [];
  const held = new Map<string, () => void>();

  beforeAll(async () => {
    upstream = await startRawUpstream((message, res: ServerResponse, req) => {
      const label = new URL(req.url ?? '/', 'http://upstream').searchParams.get('server') ?? '?';
      if (message) seen.push(label);
      if (message?.method === 'initialize') return answer(res, message.id, initializeResult()), true;
      if (message?.method === 'tools/list') return held.set(label, () => answer(res, message.id, { tools: [{ name: `tool-${label}`, inputSchema: { type: 'object' } }] })), true;
      return false;
    });
  });
  afterAll(() => upstream?.close());

  it("runs a team's second refresh once its first has finished, and another team's beside them", async () => {
    const { platform, owner, team, register } = testbed();
    const admin = await adminClient(platform);
    const other = await newPerson(platform, admin, 'other-owner');
    const otherTeam = await newTeam(admin, other);
    const first = await register('first', `${upstream.url}?server=first`);
    const second = await register('second', `${upstream.url}?server=second`);
    const created = await other.client.post(`/v1/teams/${otherTeam}/mcp-servers`, { name: 'Other', slug: unique('other'), url: `${upstream.url}?server=other` });
    expect(created.status).toBe(201);

    const refreshing = owner.client.post(`/v1/teams/${team}/mcp-servers/${first}/refresh`);
    await eventually(() => held.has('first'), "the first server's tools/list");
    const waiting = owner.client.post(`/v1/teams/${team}/mcp-servers/${second}/refresh`);
    const beside = other.client.post(`/v1/teams/${otherTeam}/mcp-servers/${created.body.data.id}/refresh`);
    // The other team's discovery goes on while the first holds the team's slot...
    await eventually(() => held.has('other'), "the other team's tools/list");
    held.get('other')!();
    expect((await beside).status).toBe(200);
    // ...and the second server of the team has not been asked anything (its refresh waits for a slot).
    expect(seen).not.toContain('second');

    held.get('first')!();
    expect((await refreshing).status).toBe(200);
    await eventually(() => held.has('second'), "the second server's tools/list");
    held.get('second')!();
    const answered = await waiting;
    expect([answered.status, answered.body.data.map((item: { name: string }) => item.name)]).toEqual([200, ['tool-second']]);
    expect(seen.indexOf('second')).toBeGreaterThan(seen.lastIndexOf('first'));
  }, 60_000);
});
