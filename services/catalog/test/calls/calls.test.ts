import { randomUUID } from 'node:crypto';
import { createCallRecorder, type CallRecorder, type McpCallEvent } from '@platform/gateway';
import { createEventBus, TOPICS, type EventBus, type ServiceClients } from '@platform/runtime';
import {
  adminClient, eventually, grpcClients, memoryLogger, newPerson, newRoleCast, newTeam, startTestPlatform, unique, type ApiClient, type TestPerson, type TestPlatform,
} from '@platform/test';
import { callEvent } from './fixtures';

const RECORD_FIELDS = [
  'captured', 'clientName', 'errorClass', 'exposedName', 'gateway', 'id', 'latencyMs', 'method', 'occurredAt', 'outcome',
  'principal', 'providerSlug', 'requestBytes', 'requestId', 'responseBytes', 'server',
].sort();
const PRINCIPAL_FIELDS = [
  'apiKeyName', 'displayName', 'email', 'kind', 'oauthClientName', 'oauthClientVerified', 'serviceAccountExists',
  'serviceAccountId', 'serviceAccountTeamSlug', 'userId',
].sort();

interface Target {
  id: string;
  slug: string;
  name: string;
}

interface CallJson {
  id: number;
  requestId: string;
  exposedName: string;
  [key: string]: unknown;
}

/**
 * Call records end to end (issue 5, spec §2.9, op 6): the edge's recorder publishes on the platform's real bus (Kafka
 * under the CI env), the catalog's consumer stores each event once, and the team reads them through the edge.
 */
describe('call records', () => {
  let platform: TestPlatform;
  let bus: EventBus;
  let recorder: CallRecorder;
  let admin: ApiClient;
  let owner: TestPerson;
  let teamAdmin: TestPerson;
  let editor: TestPerson;
  let member: TestPerson;
  let staff: TestPerson;
  let auditor: TestPerson;
  let outsider: TestPerson;
  let team: { slug: string; id: string };
  let otherTeam: { slug: string; id: string };
  let gateway: Target;
  let server: Target;
  let clients: ServiceClients;

  const teamOf = async (slug: string) => ({ slug, id: (await admin.get(`/v1/teams/${slug}`)).body.data.id as string });
  const newGateway = async (teamSlug: string, client: ApiClient): Promise<Target> => {
    const created = await client.post(`/v1/teams/${teamSlug}/gateways`, { slug: unique('gw'), name: 'Tools gateway' });
    expect(created.status).toBe(201);
    return { id: created.body.data.id, slug: created.body.data.slug, name: created.body.data.name };
  };
  const newServer = async (teamSlug: string, client: ApiClient): Promise<Target> => {
    const created = await client.post(`/v1/teams/${teamSlug}/mcp-servers`, { name: 'Search', slug: unique('srv'), url: 'http://127.0.0.1:9/mcp' });
    expect(created.status).toBe(201);
    return { id: created.body.data.id, slug: created.body.data.slug, name: created.body.data.name };
  };

  const calls = (teamSlug = team.slug, query = '') => `/v1/teams/${teamSlug}/calls${query}`;

  /** Records calls through the recorder and waits until the team's list shows each (they travel through the bus). */
  async function recorded(teamRef: { slug: string }, ...events: McpCallEvent[]): Promise<CallJson[]> {
    for (const event of events) recorder.record(event);
    await recorder.flush();
    const wanted = new Set(events.map((event) => event.requestId));
    return eventually(
      async () => {
        const page = await owner.client.get(calls(teamRef.slug, '?limit=200'));
        return (page.body.data as CallJson[] | undefined)?.filter((call) => wanted.has(call.requestId)) ?? [];
      },
      (found) => found.length === wanted.size,
    );
  }

  /** A call as an `mcp.call-batch` message of its own, keyed by the team: one partition, in publishing order. */
  const batchMessage = (call: McpCallEvent) => {
    const { teamId, gateway, server, principal, clientName, ...own } = call;
    const data = { groups: [{ context: { teamId, gateway, server, principal, clientName }, calls: [{ id: randomUUID(), ...own }] }] };
    const value = JSON.stringify({ id: randomUUID(), type: 'mcp.call-batch', source: 'gateway', occurredAt: new Date().toISOString(), data });
    return { topic: TOPICS.calls, key: team.id, value, headers: {} };
  };

  const ownerCall = (overrides: Partial<McpCallEvent> = {}) =>
    callEvent(team.id, {
      gateway,
      server,
      principal: { kind: 'user', userId: owner.id, displayName: 'Owner', email: owner.email, oauthClientName: 'Claude', oauthClientVerified: true },
      ...overrides,
    });

  beforeAll(async () => {
    platform = await startTestPlatform({ env: { ALLOWED_INTERNAL_NETWORKS: '127.0.0.0/8' } });
    clients = grpcClients(platform);
    // A bus client of the test's own on the platform's bus (same brokers and prefix), as a separate edge would hold.
    bus = createEventBus(platform.platform.context.config.bus, memoryLogger('edge').logger);
    recorder = createCallRecorder({ bus, logger: memoryLogger('recorder').logger });
    admin = await adminClient(platform);
    const cast = await newRoleCast(platform, admin);
    ({ owner, teamAdmin, editor, member, outsider, staff } = cast);
    auditor = await newPerson(platform, admin, 'auditor', 'auditor');
    team = await teamOf(cast.team);
    otherTeam = await teamOf(cast.otherTeam);
    gateway = await newGateway(team.slug, owner.client);
    server = await newServer(team.slug, owner.client);
  }, 120_000);
  afterAll(async () => {
    await clients?.close();
    await bus?.close();
    await platform?.stop();
  });

  it('stores a recorded call and shows it with the fields of §2.9, in the list and on its own', async () => {
    const event = ownerCall({ exposedName: 'search__web', latencyMs: 37, requestBytes: 210, responseBytes: 4096, errorClass: '' });
    const [listed] = await recorded(team, event);

    expect(Object.keys(listed!).sort()).toEqual(RECORD_FIELDS);
    expect(Object.keys(listed!.principal as object).sort()).toEqual(PRINCIPAL_FIELDS);
    expect(listed).toMatchObject({
      occurredAt: new Date(event.occurredAt).toISOString(),
      method: 'tools/call',
      exposedName: 'search__web',
      gateway: { ...gateway, exists: true },
      server: { ...server, exists: true },
      principal: {
        kind: 'user',
        userId: owner.id,
        displayName: 'Owner',
        email: owner.email,
        apiKeyName: null,
        oauthClientName: 'Claude',
        oauthClientVerified: true,
        serviceAccountId: null,
        serviceAccountTeamSlug: null,
        serviceAccountExists: false,
      },
      clientName: 'claude-ai',
      outcome: 'ok',
      errorClass: '',
      providerSlug: null,
      latencyMs: 37,
      requestBytes: 210,
      responseBytes: 4096,
      requestId: event.requestId,
      captured: false,
    });
    expect(Number.isInteger(listed!.id) && listed!.id >= 1).toBe(true);

    const single = await owner.client.get(calls(team.slug, `/${listed!.id}`));
    expect(single.status).toBe(200);
    expect(single.body.data).toEqual({ ...listed, payloads: null });
  });

  it('records a call that reached no server with a null server and its error class', async () => {
    const { server: _none, ...withoutServer } = ownerCall({ method: 'tools/call', exposedName: 'nope__missing', outcome: 'refused', errorClass: 'unknown_name' });
    const [listed] = await recorded(team, withoutServer);
    expect(listed).toMatchObject({ server: null, outcome: 'refused', errorClass: 'unknown_name', exposedName: 'nope__missing' });
  });

  it('stores an event delivered twice once, and skips malformed events without blocking the ones after them', async () => {
    const duplicate = ownerCall();
    const envelope = JSON.stringify({ id: randomUUID(), type: 'mcp.call', source: 'gateway', occurredAt: new Date().toISOString(), data: duplicate });
    const malformed = ownerCall({ outcome: 'exploded' as McpCallEvent['outcome'] });
    const otherType = ownerCall();
    const message = (value: string) => ({ topic: TOPICS.calls, key: team.id, value, headers: {} });
    // Same key, so one partition: the consumer meets these in this order, the marker last.
    await bus.publish([
      message(envelope),
      message(envelope),
      message('{not json'),
      message(JSON.stringify({ id: randomUUID(), type: 'mcp.call', source: 'gateway', occurredAt: new Date().toISOString(), data: malformed })),
      message(JSON.stringify({ id: randomUUID(), type: 'something.else', source: 'gateway', occurredAt: new Date().toISOString(), data: otherType })),
    ]);
    await bus.publish([message(envelope)]);
    // The marker goes keyed too (the recorder's batches are unkeyed, so one could overtake the messages above).
    const marker = ownerCall();
    await bus.publish([batchMessage(marker)]);

    const requestIds = await eventually(
      async () => ((await owner.client.get(calls(team.slug, '?limit=200'))).body.data as CallJson[]).map((call) => call.requestId),
      (ids) => ids.includes(marker.requestId),
    );
    expect(requestIds.filter((id) => id === duplicate.requestId)).toHaveLength(1);
    expect(requestIds).not.toContain(malformed.requestId);
    expect(requestIds).not.toContain(otherType.requestId);
    expect(requestIds).toContain(marker.requestId);
  });

  it('stores records holding NUL characters and unpaired surrogates, made storable, without holding up the records after them', async () => {
    const grinning = '\u{1F600}'; // one character, two UTF-16 units
    const before = ownerCall({ exposedName: 'before' });
    // Each a value PostgreSQL refuses in text or JSON: NUL, an unpaired surrogate, and a pair a cut by UTF-16 units splits.
    const unstorable = ownerCall({
      method: 'tools/call\u0000',
      exposedName: 'evil\u0000name\uD800',
      clientName: 'client\u0000\uDC00',
      principal: { kind: 'user', userId: owner.id, displayName: 'Lone \uD83D', email: owner.email, oauthClientName: 'a\u0000b', oauthClientVerified: false },
      payloads: { request: '{"q":"\u0000\uD800"}', response: `${'r'.repeat(16 * 1024 - 1)}${grinning}tail` },
    });
    // 2,047 characters and a pair, then more: the cut at 2,048 characters keeps the pair whole.
    const cutName = ownerCall({ exposedName: `${'n'.repeat(2047)}${grinning}more` });
    // A client's unknown method of any length, or an empty one, still has its record: cut to 200 characters.
    const longMethod = ownerCall({ method: 'm'.repeat(300) });
    const emptyMethod = ownerCall({ method: '' });
    const after = ownerCall({ exposedName: 'after' });
    await bus.publish([before, unstorable, cutName, longMethod, emptyMethod, after].map(batchMessage));

    const wanted = [before, unstorable, cutName, longMethod, emptyMethod, after].map((call) => call.requestId);
    const listed = await eventually(
      async () => ((await owner.client.get(calls(team.slug, '?limit=200'))).body.data as CallJson[]).filter((call) => wanted.includes(call.requestId)),
      (found) => found.length === wanted.length,
    );
    const stored = (call: McpCallEvent) => listed.find((found) => found.requestId === call.requestId)!;
    expect(stored(before).exposedName).toBe('before');
    expect(stored(after).exposedName).toBe('after');
    expect(stored(unstorable)).toMatchObject({
      method: 'tools/call',
      exposedName: 'evilname\uFFFD',
      clientName: 'client\uFFFD',
      principal: { displayName: 'Lone \uFFFD', oauthClientName: 'ab' },
    });
    expect(stored(cutName).exposedName).toBe(`${'n'.repeat(2047)}${grinning}`);
    expect([stored(longMethod).method, stored(emptyMethod).method]).toEqual(['m'.repeat(200), '']);
    const single = await owner.client.get(calls(team.slug, `/${stored(unstorable).id}`));
    expect(single.body.data.payloads).toEqual({
      request: '{"q":"\uFFFD"}',
      response: `${'r'.repeat(16 * 1024 - 1)}${grinning}`,
      requestTruncated: false,
      responseTruncated: true,
    });
  });

  it('stores the calls of an mcp.call-batch with what their group shares, each id once, skipping a malformed call or group', async () => {
    const [first, second, broken] = [ownerCall(), ownerCall({ exposedName: 'second' }), ownerCall({ outcome: 'exploded' as McpCallEvent['outcome'] })];
    const split = (call: McpCallEvent, id = randomUUID()) => {
      const { teamId, gateway, server, principal, clientName, ...own } = call;
      return { context: { teamId, gateway, server, principal, clientName }, call: { id, ...own } };
    };
    const repeated = split(second);
    const brokenContext = split(ownerCall({ exposedName: 'bad-context' }));
    const batch = (groups: unknown[]) => ({
      topic: TOPICS.calls,
      key: team.id,
      value: JSON.stringify({ id: randomUUID(), type: 'mcp.call-batch', source: 'gateway', occurredAt: new Date().toISOString(), data: { groups } }),
      headers: {},
    });
    const marker = split(ownerCall());
    await bus.publish([
      batch([
        { context: split(first).context, calls: [split(first).call, repeated.call, split(broken).call] },
        // Malformed within this team (a principal of no known kind): stored, it would be listed below.
        { context: { ...brokenContext.context, principal: { kind: 'robot' } }, calls: [brokenContext.call] },
      ]),
      batch([{ context: repeated.context, calls: [repeated.call] }]),
      batch([{ context: marker.context, calls: [marker.call] }]),
    ]);
    const listed = await eventually(
      async () => (await owner.client.get(calls(team.slug, '?limit=200'))).body.data as CallJson[],
      (found) => found.some((call) => call.requestId === marker.call.requestId),
    );
    const requestIds = listed.map((call) => call.requestId);
    expect(requestIds).toContain(first.requestId);
    expect(requestIds.filter((id) => id === second.requestId)).toHaveLength(1);
    expect(requestIds).not.toContain(broken.requestId);
    expect(requestIds).not.toContain(brokenContext.call.requestId);
    // Each stored record has its group's gateway, server and principal.
    const stored = listed.find((call) => call.requestId === second.requestId)!;
    expect(stored).toMatchObject({ exposedName: 'second', gateway: { id: second.gateway.id, slug: second.gateway.slug }, server: { id: second.server!.id } });
  });

  it('stores the calls of an mcp.calls batch (full records), each id once even when it comes again in another batch, skipping only a malformed item', async () => {
    const [first, second, broken] = [ownerCall(), ownerCall(), ownerCall({ outcome: 'exploded' as McpCallEvent['outcome'] })];
    const item = (call: McpCallEvent, id = randomUUID()) => ({ id, ...call });
    const repeated = item(second);
    const batch = (items: unknown[]) => ({
      topic: TOPICS.calls,
      key: team.id,
      value: JSON.stringify({ id: randomUUID(), type: 'mcp.calls', source: 'gateway', occurredAt: new Date().toISOString(), data: { calls: items } }),
      headers: {},
    });
    // The second batch repeats one call (a retry after a failed publish regroups records into new batches). Same
    // key, so one partition: the consumer meets the marker's batch last.
    const marker = ownerCall();
    await bus.publish([batch([item(first), repeated, item(broken)]), batch([repeated]), batch([item(marker)])]);
    const requestIds = await eventually(
      async () => ((await owner.client.get(calls(team.slug, '?limit=200'))).body.data as CallJson[]).map((call) => call.requestId),
      (ids) => ids.includes(marker.requestId),
    );
    expect(requestIds).toContain(first.requestId);
    expect(requestIds.filter((id) => id === second.requestId)).toHaveLength(1);
    expect(requestIds).not.toContain(broken.requestId);
  });

  describe('listing', () => {
    let listTeam: { slug: string; id: string };
    let gatewayA: Target;
    let gatewayB: Target;
    let serverA: Target;
    let ids: Record<string, number>;
    const someone = randomUUID();

    beforeAll(async () => {
      listTeam = await teamOf(await newTeam(admin, owner));
      gatewayA = await newGateway(listTeam.slug, owner.client);
      gatewayB = await newGateway(listTeam.slug, owner.client);
      serverA = await newServer(listTeam.slug, owner.client);
      const base = (name: string, overrides: Partial<McpCallEvent>) =>
        callEvent(listTeam.id, { gateway: gatewayA, server: serverA, exposedName: name, principal: { kind: 'user', userId: owner.id }, ...overrides });
      // Recorded in this order, so their ids increase in this order.
      const events = [
        base('c1', { occurredAt: '2026-01-01T10:00:00.000Z' }),
        base('c2', { occurredAt: '2026-01-02T10:00:00.000Z', outcome: 'timeout', errorClass: 'timeout' }),
        base('c3', { occurredAt: '2026-01-03T10:00:00.000Z', gateway: gatewayB, method: 'resources/read', exposedName: 'c3' }),
        base('c4', { occurredAt: '2026-01-04T10:00:00.000Z', principal: { kind: 'api_key', userId: someone, apiKeyName: 'ci' } }),
        base('c5', { occurredAt: '2026-01-05T10:00:00.000Z', server: undefined, method: 'tools/list', exposedName: 'c5' }),
      ];
      ids = {};
      for (const event of events) {
        const [stored] = await recorded(listTeam, event);
        ids[stored!.exposedName] = stored!.id;
      }
    }, 120_000);

    const names = async (query: string): Promise<string[]> => {
      const response = await owner.client.get(calls(listTeam.slug, query));
      expect(response.status).toBe(200);
      return (response.body.data as CallJson[]).map((call) => call.exposedName);
    };

    it('lists newest first and pages with an opaque cursor until the last page', async () => {
      expect(ids.c1! < ids.c2! && ids.c2! < ids.c3! && ids.c3! < ids.c4! && ids.c4! < ids.c5!).toBe(true);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const response = await owner.client.get(calls(listTeam.slug, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`));
        expect(response.status).toBe(200);
        seen.push(...(response.body.data as CallJson[]).map((call) => call.exposedName));
        cursor = response.body.nextCursor;
        pages += 1;
      } while (cursor);
      expect(seen).toEqual(['c5', 'c4', 'c3', 'c2', 'c1']);
      expect(pages).toBe(3);
    });

    it('orders by the time of the call, then by id, to the microsecond: a record that arrives late takes its place by time', async () => {
      const timeTeam = await teamOf(await newTeam(admin, owner));
      const at = (name: string, occurredAt: string) => callEvent(timeTeam.id, { exposedName: name, occurredAt });
      // Stored one by one in this order, so their ids rise in it: the later of two calls within one millisecond is
      // stored first, two share an instant, and the oldest arrives last (as after an outage of the bus).
      for (const event of [
        at('newest', '2026-03-02T10:00:00.000Z'),
        at('micro-later', '2026-03-01T10:00:00.000200Z'),
        at('micro-earlier', '2026-03-01T10:00:00.000100Z'),
        at('same-first', '2026-03-01T09:00:00.000Z'),
        at('same-second', '2026-03-01T09:00:00.000Z'),
        at('late', '2026-02-28T10:00:00.000Z'),
      ]) {
        await recorded(timeTeam, event);
      }
      const paged = async (query: string, limit: number): Promise<string[]> => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const response = await owner.client.get(calls(timeTeam.slug, `?limit=${limit}${query}${cursor ? `&cursor=${cursor}` : ''}`));
          expect(response.status).toBe(200);
          seen.push(...(response.body.data as CallJson[]).map((call) => call.exposedName));
          cursor = response.body.nextCursor;
        } while (cursor);
        return seen;
      };
      const order = ['newest', 'micro-later', 'micro-earlier', 'same-second', 'same-first', 'late'];
      expect(await paged('', 200)).toEqual(order);
      // A cursor resumes after the exact instant (microseconds) and id of the page's last record.
      expect(await paged('', 1)).toEqual(order);
      expect(await paged('', 2)).toEqual(order);
      expect(await paged('&since=2026-03-01T00:00:00Z&until=2026-03-01T23:59:59Z', 1)).toEqual(order.slice(1, 5));
    }, 60_000);

    it('filters by gateway, server, outcome, method, person and time, alone and together', async () => {
      expect(await names(`?gatewayId=${gatewayB.id}`)).toEqual(['c3']);
      expect(await names(`?gatewayId=${gatewayA.id}`)).toEqual(['c5', 'c4', 'c2', 'c1']);
      expect(await names(`?serverId=${serverA.id}`)).toEqual(['c4', 'c3', 'c2', 'c1']);
      expect(await names('?outcome=timeout')).toEqual(['c2']);
      expect(await names('?method=resources%2Fread')).toEqual(['c3']);
      expect(await names(`?userId=${someone}`)).toEqual(['c4']);
      expect(await names(`?userId=${owner.id}`)).toEqual(['c5', 'c3', 'c2', 'c1']);
      expect(await names('?since=2026-01-02T10:00:00Z&until=2026-01-04T10:00:00Z')).toEqual(['c4', 'c3', 'c2']);
      expect(await names('?since=2026-01-04T11:00:00%2B01:00')).toEqual(['c5', 'c4']);
      expect(await names(`?gatewayId=${gatewayA.id}&outcome=ok&method=tools%2Fcall`)).toEqual(['c4', 'c1']);
      expect(await names(`?gatewayId=${randomUUID()}`)).toEqual([]);
    });

    it('refuses bad filters and cursors with 400, naming the field', async () => {
      for (const [query, field] of [
        ['?gatewayId=nope', 'gatewayId'],
        ['?serverId=1', 'serverId'],
        ['?userId=x', 'userId'],
        ['?outcome=exploded', 'outcome'],
        ['?since=yesterday', 'since'],
        ['?until=2026-13-01T00:00:00Z', 'until'],
        ['?limit=0', 'limit'],
        ['?cursor=!!!', 'cursor'],
        [`?cursor=${Buffer.from(JSON.stringify({ before: 'x' })).toString('base64url')}`, 'cursor'],
        // The shape of cursors before the list was ordered by time (docs/api.md: cursors are not stable across releases).
        [`?cursor=${Buffer.from(JSON.stringify({ before: '5' })).toString('base64url')}`, 'cursor'],
        // A cursor's time reaches PostgreSQL: one that does not exist, or is no time, is refused before any query.
        [`?cursor=${Buffer.from(JSON.stringify({ at: '2026-02-30 10:00:00+00', id: '5' })).toString('base64url')}`, 'cursor'],
        [`?cursor=${Buffer.from(JSON.stringify({ at: 'yesterday', id: '5' })).toString('base64url')}`, 'cursor'],
        [`?cursor=${Buffer.from(JSON.stringify({ at: '2026-01-01 10:00:00+00', id: '0' })).toString('base64url')}`, 'cursor'],
        [`?cursor=${Buffer.from(JSON.stringify({ at: '2026-01-01 10:00:00+00', id: '9223372036854775808' })).toString('base64url')}`, 'cursor'],
        ['?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
        // PostgreSQL has no year 0000, nor anything after 9999 written as ISO 8601: bounds are years 0001 to 9999, in UTC.
        ['?since=0000-01-01T00:00:00Z', 'since'],
        ['?until=0000-01-01T00:00:00Z', 'until'],
        ['?since=0001-01-01T00:00:00%2B01:00', 'since'],
        ['?until=9999-12-31T23:59:59-01:00', 'until'],
        // PostgreSQL text cannot hold NUL, so no filter may carry one.
        ['?method=tools%00call', 'method'],
      ]) {
        const response = await owner.client.get(calls(listTeam.slug, query));
        expect({ query, status: response.status, code: response.body.error?.code }).toEqual({ query, status: 400, code: 'invalid_request' });
        expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
      }
      // The years' bounds themselves are fine.
      expect(await names('?since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59Z')).toEqual(['c5', 'c4', 'c3', 'c2', 'c1']);
    });

    it('refuses the same filters with invalid_request when they reach the catalog by another way than the edge', async () => {
      // The bounds travel as protobuf Timestamps: any instant, even one PostgreSQL cannot read.
      const list = (filters: { since?: string; until?: string; method?: string }) =>
        clients.catalog.listCalls({ teamId: listTeam.id, gatewayId: '', serverId: '', outcome: '', userId: '', method: '', ...filters });
      for (const [filters, field] of [
        [{ since: '0000-12-31T23:00:00.000Z' }, 'since'],
        [{ until: '+010000-01-01T00:59:59.000Z' }, 'until'],
        [{ method: 'tools\u0000call' }, 'method'],
      ] as const) {
        await expect(list(filters)).rejects.toMatchObject({ code: 'invalid_request', fields: [expect.objectContaining({ field })] });
      }
    });
  });

  describe('op 6: one call', () => {
    let ownCall: CallJson;
    let foreignCall: CallJson;

    beforeAll(async () => {
      [ownCall] = await recorded(team, ownerCall());
      const otherGateway = await newGateway(otherTeam.slug, outsider.client);
      recorder.record(callEvent(otherTeam.id, { gateway: otherGateway, principal: { kind: 'user', userId: outsider.id } }));
      await recorder.flush();
      foreignCall = await eventually(async () => (await outsider.client.get(calls(otherTeam.slug))).body.data?.[0] as CallJson | undefined, 'the other team\'s call');
    }, 60_000);

    it('answers 404 call_not_found for another team\'s call and for an id no call has', async () => {
      for (const id of [foreignCall.id, '9223372036854775807']) {
        const response = await owner.client.get(calls(team.slug, `/${id}`));
        expect(response.status).toBe(404);
        expect(response.body.error.code).toBe('call_not_found');
      }
      // The other team reads its own call.
      expect((await outsider.client.get(calls(otherTeam.slug, `/${foreignCall.id}`))).status).toBe(200);
    });

    it.each(['0', 'abc', '-1', '1.5', '01', '9223372036854775808'])('answers 400 for the call id %s', async (id) => {
      const response = await owner.client.get(calls(team.slug, `/${id}`));
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['callId']);
    });

    it('lets team owners and admins and platform staff read calls; editors and members get 403, outsiders 404', async () => {
      const readers: [string, ApiClient, number][] = [
        ['owner', owner.client, 200],
        ['team admin', teamAdmin.client, 200],
        ['platform admin', admin, 200],
        ['platform auditor', auditor.client, 200],
        ['platform staff', staff.client, 200],
        ['editor', editor.client, 403],
        ['member', member.client, 403],
        ['outsider', outsider.client, 404],
      ];
      for (const [who, client, status] of readers) {
        const list = await client.get(calls());
        const single = await client.get(calls(team.slug, `/${ownCall.id}`));
        expect({ who, list: list.status, single: single.status }).toEqual({ who, list: status, single: status });
        if (status === 200) expect(single.body.data.requestId).toBe(ownCall.requestId);
      }
    });

    it('needs a signed-in caller', async () => {
      const anonymous = await fetch(platform.url(calls()));
      expect(anonymous.status).toBe(401);
    });
  });

  it('shows captured payloads, capped at 16 KiB and flagged when cut, only on the single call', async () => {
    const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search__web', arguments: { q: 'x'.repeat(20_000) } } });
    const response = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'found' }] } });
    const [listed] = await recorded(team, ownerCall({ payloads: { request, response } }));
    expect(listed!.captured).toBe(true);
    expect(listed).not.toHaveProperty('payloads');

    const single = await owner.client.get(calls(team.slug, `/${listed!.id}`));
    expect(single.body.data.payloads).toEqual({
      request: request.slice(0, 16 * 1024),
      response,
      requestTruncated: true,
      responseTruncated: false,
    });
  });

  it('shows whether the gateway, the server and the service account still exist when read', async () => {
    const doomedGateway = await newGateway(team.slug, owner.client);
    const doomedServer = await newServer(team.slug, owner.client);
    const account = await owner.client.post(`/v1/teams/${team.slug}/service-accounts`, { name: unique('bot') });
    expect(account.status).toBe(201);
    const [listed] = await recorded(
      team,
      callEvent(team.id, {
        gateway: doomedGateway,
        server: doomedServer,
        principal: { kind: 'service_account', serviceAccountId: account.body.data.id, serviceAccountTeamSlug: team.slug, displayName: account.body.data.name },
      }),
    );
    expect(listed).toMatchObject({
      gateway: { id: doomedGateway.id, exists: true },
      server: { id: doomedServer.id, exists: true },
      principal: { kind: 'service_account', serviceAccountId: account.body.data.id, serviceAccountTeamSlug: team.slug, serviceAccountExists: true },
    });

    expect((await owner.client.delete(`/v1/teams/${team.slug}/gateways/${doomedGateway.id}`)).status).toBe(204);
    expect((await owner.client.delete(`/v1/teams/${team.slug}/mcp-servers/${doomedServer.id}`)).status).toBe(204);
    expect((await owner.client.delete(`/v1/teams/${team.slug}/service-accounts/${account.body.data.id}`)).status).toBe(204);

    const after = (await owner.client.get(calls(team.slug, `/${listed!.id}`))).body.data;
    // Names stay as they were at the call; only the flags change.
    expect(after).toMatchObject({
      gateway: { ...doomedGateway, exists: false },
      server: { ...doomedServer, exists: false },
      principal: { serviceAccountId: account.body.data.id, serviceAccountExists: false },
    });
    const inList = ((await owner.client.get(calls(team.slug, `?gatewayId=${doomedGateway.id}`))).body.data as CallJson[])[0]!;
    expect(inList).toMatchObject({ gateway: { exists: false }, server: { exists: false }, principal: { serviceAccountExists: false } });
  });
});
