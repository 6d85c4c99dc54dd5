import { adminClient, ApiClient, newPerson, startTestPlatform, TEST_PASSWORD, type TestPlatform } from '@platform/test';

/** The sign-in back-off (docs/api.md) holds for guesses sent all at once, and never counts a good sign-in. */
describe('sign-in back-off under bursts', () => {
  let platform: TestPlatform;
  let admin: ApiClient;

  beforeAll(async () => {
    platform = await startTestPlatform();
    admin = await adminClient(platform);
  }, 120_000);
  afterAll(() => platform?.stop());

  it('checks no more than 5 passwords of a burst of guesses sent at once to one account', async () => {
    const person = await newPerson(platform, admin, { label: 'burst' });
    const anonymous = new ApiClient(platform);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => anonymous.post('/v1/auth/sign-in', { email: person.email, password: `guess number ${i}` })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(5).fill(401), ...Array<number>(7).fill(429)]);
    // The account stays locked for the window, even for the right password.
    expect((await anonymous.post('/v1/auth/sign-in', { email: person.email, password: TEST_PASSWORD })).status).toBe(429);
  }, 60_000);

  it('does not count good sign-ins against the client address', async () => {
    const person = await newPerson(platform, admin, { label: 'regular' });
    // More good sign-ins from this address than the address may fail (20), after the burst's failures above.
    for (let i = 0; i < 22; i++) expect((await new ApiClient(platform).signIn(person.email, TEST_PASSWORD)).status).toBe(200);
  }, 120_000);
});
