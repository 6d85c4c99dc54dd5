import { answer, eventually, initializeResult, startRawUpstream, type RawUpstream } from '@platform/test';
import { MAX_NAME_BYTES, MAX_NAME_CHARS } from '../../src/domain/discovery';
import { MAX_VALIDATED_VALUES } from '../../src/domain/upstream-messages';
import { capabilityTestbed } from './testbed';
import { startUpstream, type Upstream } from './upstream';

const refusal = (reason: string) => `The MCP server's answer was refused (protocol_error): ${reason}`;
const NAME_LIMITS = 'the platform takes names of at most 1,024 characters and 2,048 bytes';

/** An upstream (raw JSON answers) whose `initialize` result is `initialize` and whose one page of tools is `tools`. */
function startListingUpstream(tools: unknown[], initialize = initializeResult()): Promise<RawUpstream> {
  return startRawUpstream((message, res) => {
    if (message?.method === 'initialize') answer(res, message.id, initialize);
    else if (message?.method === 'tools/list') answer(res, message.id, { tools });
    else return false;
    return true;
  });
}

/**
 * What discovery takes of an upstream's answers besides their number and bytes (docs/catalog.md, How many
 * bytes and What is stored of a listing): names the store can index, and pieces small enough to validate.
 */
describe('what discovery takes of an answer', () => {
  const testbed = capabilityTestbed();
  const raw: RawUpstream[] = [];
  let upstream: Upstream;
  beforeAll(async () => {
    upstream = await startUpstream('X-Upstream-Key');
  });
  afterAll(async () => {
    await upstream?.close();
    await Promise.allSettled(raw.map((server) => server.close()));
  });

  const refresh = (id: string) => testbed().owner.client.post(`/v1/teams/${testbed().team}/mcp-servers/${id}/refresh`);
  const serverView = async (id: string) => (await testbed().owner.client.get(`/v1/teams/${testbed().team}/mcp-servers/${id}`)).body.data;
  const listing = async (tools: unknown[], initialize?: ReturnType<typeof initializeResult>) => {
    const started = await startListingUpstream(tools, initialize);
    raw.push(started);
    return testbed().register('raw', started.url);
  };

  /** The refresh fails with `message`, recorded on the server and audited as a protocol_error, storing nothing. */
  async function refusedWith(id: string, message: string): Promise<void> {
    const refused = await refresh(id);
    expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([503, 'unavailable', message]);
    expect(await serverView(id)).toMatchObject({ lastRefreshError: message, refreshedAt: null, counts: { tools: 0 } });
    const entry = await eventually(
      async () => ((await testbed().owner.client.get(`/v1/teams/${testbed().team}/audit?action=mcp_server.refresh`)).body.data ?? []).find((item: { targetId: string }) => item.targetId === id),
      'a failed mcp_server.refresh audit entry',
    );
    expect(entry.metadata).toEqual({ outcome: 'failed', errorClass: 'protocol_error' });
  }

  it('takes a tool name of 1,024 characters and refuses one of 1,025, without echoing it', async () => {
    const longest = 'n'.repeat(MAX_NAME_CHARS);
    upstream.state.tools = [{ name: longest, description: 'Longest' }];
    const id = await testbed().register('names', upstream.url);
    const taken = await refresh(id);
    expect(taken.status).toBe(200);
    expect(taken.body.data.map((item: { name: string }) => item.name)).toContain(longest);

    upstream.state.tools = [{ name: `${longest}n`, description: 'Too long' }];
    const message = refusal(`it lists a tool name of 1,025 characters (1,025 bytes); ${NAME_LIMITS}`);
    const refused = await refresh(id);
    expect([refused.status, refused.body.error?.message]).toEqual([503, message]);
    // What the server had stays as it was.
    expect(await serverView(id)).toMatchObject({ lastRefreshError: message, counts: { tools: 1 } });
  });

  it('refuses a name within the characters but over the bytes (the index holds about 2,700), recorded and audited', async () => {
    upstream.state.tools = [{ name: '語'.repeat(700), description: 'Wide' }];
    expect(700 * 3).toBeGreaterThan(MAX_NAME_BYTES);
    const id = await testbed().register('wide', upstream.url);
    await refusedWith(id, refusal(`it lists a tool name of 700 characters (2,100 bytes); ${NAME_LIMITS}`));
  });

  it('discovers a tool with an output schema, which it never compiles', async () => {
    // Ajv, the SDK's default validator, refuses to compile this schema: discovery never needs to.
    const outputSchema = { type: 'object', properties: { result: { type: 'not-a-type' } } };
    const id = await listing([{ name: 'typed', inputSchema: { type: 'object' }, outputSchema }]);
    const refreshed = await refresh(id);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data).toEqual([expect.objectContaining({ name: 'typed', definition: expect.objectContaining({ outputSchema }) })]);
  });

  it('counts a page before validating any of it', async () => {
    // 10,001 invalid items: counted, they are over the bound; validated first, they would be 10,001 schema failures.
    const id = await listing(Array.from({ length: 10_001 }, () => ({})));
    await refusedWith(id, refusal('it lists more than 10,000 capabilities, the most the platform takes from one server'));
  });

  it('refuses a capability holding more JSON values than the platform validates in one piece', async () => {
    const required = Array.from({ length: MAX_VALIDATED_VALUES }, (_, index) => `p${index}`);
    const id = await listing([{ name: 'sprawling', inputSchema: { type: 'object', required } }]);
    await refusedWith(id, refusal('it lists a capability whose definition holds more than 10,000 JSON values, the most the platform takes in one'));
  });

  it('refuses an initialize answer holding more JSON values than the platform validates in one piece', async () => {
    const icons = Array.from({ length: MAX_VALIDATED_VALUES / 2 }, () => ({ src: 'https://example.com/icon.png' }));
    const id = await listing([{ name: 'fine', inputSchema: { type: 'object' } }], initializeResult({ tools: {} }, { icons }));
    await refusedWith(id, refusal('it sent a message of more than 10,000 JSON values while connecting, the most the platform takes in one'));
  });
});
