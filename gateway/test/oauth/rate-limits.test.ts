import { startTestPlatform, type TestPlatform } from '@platform/test';
import { fetchManual, form, json } from './support';

/** §8 rate limits of the OAuth endpoints, per client address, answered 429 slow_down with Retry-After. */
let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
}, 60_000);

afterAll(async () => {
  await platform?.stop();
});

async function fire(count: number, send: () => Promise<Response>): Promise<Response[]> {
  const responses: Response[] = [];
  for (let i = 0; i < count; i++) responses.push(await send());
  return responses;
}

/**
 * The limit is a fixed window: a burst that straddles a window edge may pass twice over, or be refused early.
 * Retrying keeps the test exact without depending on the clock.
 */
async function expectRefusedAfter(limit: number, send: () => Promise<Response>): Promise<Response> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const responses = await fire(limit + 1, send);
    const refused = responses.findIndex((r) => r.status === 429);
    if (refused === limit) return responses[limit]!;
    if (attempt === 2) throw new Error(`expected request ${limit + 1} to be refused, got index ${refused}`);
    // Refused early (the window was already counting): start again when the next window opens. Never refused (the
    // burst straddled a window edge): the next burst is refused early and says when the window after opens.
    if (refused !== -1) await new Promise((resolve) => setTimeout(resolve, Number(responses[refused]!.headers.get('retry-after')) * 1000 + 100));
  }
  throw new Error('unreachable');
}

it('token: the 61st request in a minute from one address is refused with slow_down and Retry-After', async () => {
  const refused = await expectRefusedAfter(60, () => fetch(platform.url('/oauth/token'), form({ grant_type: 'password' })));
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(await json(refused)).toEqual({ error: 'slow_down', error_description: expect.any(String) });
}, 150_000);

it('register: the 11th request in a minute is refused', async () => {
  const refused = await expectRefusedAfter(10, () =>
    fetch(platform.url('/oauth/register'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
  );
  expect(refused.headers.get('retry-after')).toBeTruthy();
  expect((await json(refused)).error).toBe('slow_down');
}, 150_000);

it('revoke: the 61st request is refused', async () => {
  const refused = await expectRefusedAfter(60, () => fetch(platform.url('/oauth/revoke'), form({ token: 'x', client_id: 'svccl_x' })));
  expect((await json(refused)).error).toBe('slow_down');
}, 150_000);

it('authorize: the 61st request is refused with a page and Retry-After', async () => {
  const refused = await expectRefusedAfter(60, () => fetchManual(platform.url('/oauth/authorize?client_id=svccl_unknown')));
  expect(refused.headers.get('content-type')).toMatch(/text\/html/);
  expect(refused.headers.get('retry-after')).toBeTruthy();
  expect(refused.headers.get('location')).toBeNull();
}, 150_000);
