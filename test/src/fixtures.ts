import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createServiceClients, type Logger, type ServiceClients } from '@platform/runtime';
import { ApiClient } from './http-client';
import { TEST_ADMIN, type TestPlatform } from './platform';

/**
 * Fixtures shared by the integration tests of the services and the edge: people, teams, the admin's client,
 * the platform's database and gRPC clients, and polling for what happens after a change (outbox, consumers).
 */

/** The password of the people these fixtures create (unless one is given). */
export const TEST_PASSWORD = 'a long enough test password';

export type PlatformRole = 'admin' | 'auditor' | 'staff';
export type TeamRole = 'owner' | 'admin' | 'editor' | 'member';

/** `label-xxxxxxxx`: unique enough for slugs and names in tests that share a platform. */
export function unique(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

/** A unique address at example.test; the label is made safe for the local part. */
export function uniqueEmail(label: string): string {
  return `${unique(label.toLowerCase().replace(/[^a-z0-9]+/g, '-'))}@example.test`;
}

/** A client signed in through the real JSON sign-in route; throws when the sign-in is refused. */
export async function signedInClient(platform: TestPlatform, email: string, password: string): Promise<ApiClient> {
  const client = new ApiClient(platform);
  const response = await client.signIn(email, password);
  if (response.status !== 200) throw new Error(`sign-in of ${email} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return client;
}

/** A signed-in platform admin (TEST_ADMIN, bootstrapped by startTestPlatform). */
export function adminClient(platform: TestPlatform): Promise<ApiClient> {
  return signedInClient(platform, TEST_ADMIN.email, TEST_ADMIN.password);
}

export interface NewPersonOptions {
  /** Names the person: their display name and the start of their unique email. Default 'person'. */
  label?: string;
  platformRole?: PlatformRole;
  /** An exact email instead of a unique one made from the label. */
  email?: string;
  /** Default TEST_PASSWORD. */
  password?: string;
  /** Default: the label. */
  displayName?: string;
}

/** A person as created by the admin API, not signed in. */
export interface CreatedPerson {
  id: string;
  email: string;
  password: string;
  revision: number;
}

/** A person with a client signed in as them. */
export interface TestPerson extends CreatedPerson {
  client: ApiClient;
}

function personOptions(labelOrOptions: string | NewPersonOptions, platformRole?: PlatformRole): NewPersonOptions {
  return typeof labelOrOptions === 'string' ? { label: labelOrOptions, platformRole } : labelOrOptions;
}

/** Creates a person as the platform admin (POST /v1/admin/people), without signing them in. */
export async function createPerson(admin: ApiClient, labelOrOptions: string | NewPersonOptions = {}, platformRole?: PlatformRole): Promise<CreatedPerson> {
  const options = personOptions(labelOrOptions, platformRole);
  const label = options.label ?? 'person';
  const email = options.email ?? uniqueEmail(label);
  const password = options.password ?? TEST_PASSWORD;
  const response = await admin.post('/v1/admin/people', {
    email,
    displayName: options.displayName ?? label,
    password,
    ...(options.platformRole ? { platformRole: options.platformRole } : {}),
  });
  if (response.status !== 201) throw new Error(`creating ${label} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return { id: response.body.data.id, email, password, revision: response.body.data.revision };
}

/** Creates a person as the platform admin (optionally with a platform role) and signs them in. */
export async function newPerson(
  platform: TestPlatform,
  admin: ApiClient,
  labelOrOptions: string | NewPersonOptions = {},
  platformRole?: PlatformRole,
): Promise<TestPerson> {
  const person = await createPerson(admin, labelOrOptions, platformRole);
  return { ...person, client: await signedInClient(platform, person.email, person.password) };
}

/** A team owned by `owner` (POST /v1/teams) with the given members added in their roles; returns its slug. */
export async function newTeam(admin: ApiClient, owner: Pick<TestPerson, 'id'>, members: [Pick<TestPerson, 'id'>, TeamRole][] = []): Promise<string> {
  const slug = unique('team');
  const created = await admin.post('/v1/teams', { slug, name: slug, ownerId: owner.id });
  if (created.status !== 201) throw new Error(`create team failed: ${created.status} ${JSON.stringify(created.body)}`);
  for (const [person, role] of members) {
    const added = await admin.post(`/v1/teams/${slug}/members`, { personId: person.id, role });
    if (added.status !== 201) throw new Error(`add member failed: ${added.status} ${JSON.stringify(added.body)}`);
  }
  return slug;
}

/** The people of a test about who may do what: a team with one person in each role, an outsider, platform staff. */
export interface RoleCast {
  owner: TestPerson;
  teamAdmin: TestPerson;
  editor: TestPerson;
  member: TestPerson;
  /** Owns `otherTeam` and belongs to no other. */
  outsider: TestPerson;
  /** Platform staff, in no team. */
  staff: TestPerson;
  /** The slug of the team of owner, teamAdmin, editor and member. */
  team: string;
  otherTeam: string;
}

/** Creates a RoleCast as the platform admin. */
export async function newRoleCast(platform: TestPlatform, admin: ApiClient): Promise<RoleCast> {
  const owner = await newPerson(platform, admin, 'owner');
  const teamAdmin = await newPerson(platform, admin, 'team-admin');
  const editor = await newPerson(platform, admin, 'editor');
  const member = await newPerson(platform, admin, 'member');
  const outsider = await newPerson(platform, admin, 'outsider');
  const staff = await newPerson(platform, admin, 'staff', 'staff');
  const team = await newTeam(admin, owner, [
    [teamAdmin, 'admin'],
    [editor, 'editor'],
    [member, 'member'],
  ]);
  const otherTeam = await newTeam(admin, outsider);
  return { owner, teamAdmin, editor, member, outsider, staff, team, otherTeam };
}

/**
 * A pg client on the platform's own database when it runs on real Postgres, else null (embedded PGlite);
 * with `required`, throws instead of answering null. The caller ends it.
 */
export async function databaseOf(platform: TestPlatform, options: { required: true }): Promise<Client>;
export async function databaseOf(platform: TestPlatform, options?: { required?: boolean }): Promise<Client | null>;
export async function databaseOf(platform: TestPlatform, options: { required?: boolean } = {}): Promise<Client | null> {
  const url = platform.env.DATABASE_URL;
  if (!url) {
    if (options.required) throw new Error('this test needs real Postgres (source ~/.cache/mcp-platform/test.env)');
    return null;
  }
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

/** gRPC clients of the running platform's services, as another service would hold them. */
export function grpcClients(platform: TestPlatform, options: { deadlineMs?: number; logger?: Logger } = {}): ServiceClients {
  return createServiceClients({
    resolveAddress: () => platform.platform.grpcAddress!,
    deadlineMs: options.deadlineMs ?? 10_000,
    logger: options.logger ?? platform.platform.context.logger,
  });
}

/**
 * Polls `read` until `check` passes (or, given a description instead, until it returns something truthy) and
 * returns that value; throws after `timeoutMs`. For what happens after a change: outbox relays, consumers, watchers.
 */
export function eventually<T>(read: () => T | Promise<T>, check: (value: T) => boolean, timeoutMs?: number): Promise<T>;
export function eventually<T>(read: () => T | null | undefined | Promise<T | null | undefined>, what: string, timeoutMs?: number): Promise<T>;
export async function eventually<T>(read: () => T | Promise<T>, check: ((value: T) => boolean) | string, timeoutMs = 20_000): Promise<T> {
  const passes = typeof check === 'function' ? check : (value: T) => Boolean(value);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (passes(value)) return value;
    if (Date.now() > deadline) {
      const what = typeof check === 'string' ? check : 'condition';
      throw new Error(`${what} not met in time; last value: ${JSON.stringify(value)?.slice(0, 2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Retries an assertion until it passes or `timeoutMs` runs out (then throws its last failure). */
export async function expectEventually(assertion: () => void | Promise<void>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await assertion();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
