import { z } from 'zod';
import { AppError } from '@platform/runtime';
import {
  assertRevision,
  createEdgeApp,
  defineRoute,
  parseIfMatch,
  parseTeamRef,
  requireIfMatch,
  RouteDefinitionError,
  toExpressPath,
} from '../src';
import { memoryLogger } from './support';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof AppError ? error.code : 'not-an-app-error';
  }
  return undefined;
}

describe('If-Match helpers', () => {
  it('parses quoted, weak and bare revisions', () => {
    expect(parseIfMatch('"3"')).toBe(3);
    expect(parseIfMatch('W/"12"')).toBe(12);
    expect(parseIfMatch('7')).toBe(7);
    expect(parseIfMatch(' "0" ')).toBe(0);
    expect(parseIfMatch(undefined)).toBeUndefined();
  });

  it('refuses anything else with 400', () => {
    for (const value of ['', '*', '"a"', '"3', '3"', 'W/3', '"1", "2"', '-1', '1.5', '9'.repeat(16)]) {
      expect(codeOf(() => parseIfMatch(value))).toBe('invalid_request');
    }
  });

  it('requires the header (428) and compares revisions (412)', () => {
    expect(codeOf(() => requireIfMatch(undefined))).toBe('precondition_required');
    expect(requireIfMatch('"4"')).toBe(4);
    expect(codeOf(() => assertRevision(3, 4))).toBe('precondition_failed');
    expect(codeOf(() => assertRevision(4, 4))).toBeUndefined();
  });
});

describe('parseTeamRef', () => {
  it('reads uuids as ids and slugs as slugs', () => {
    expect(parseTeamRef('6f9619ff-8b86-4011-b42d-00cf4fc964ff')).toEqual({ kind: 'id', id: '6f9619ff-8b86-4011-b42d-00cf4fc964ff' });
    expect(parseTeamRef('acme')).toEqual({ kind: 'slug', slug: 'acme' });
    expect(parseTeamRef('a')).toEqual({ kind: 'slug', slug: 'a' });
    expect(parseTeamRef('9-lives')).toEqual({ kind: 'slug', slug: '9-lives' });
    expect(parseTeamRef('a'.repeat(63))).toEqual({ kind: 'slug', slug: 'a'.repeat(63) });
  });

  it('answers not_found for values no team can have', () => {
    for (const value of ['', '-acme', 'Acme', 'ac_me', 'a'.repeat(64), 'acme.org', 'acme/x']) {
      expect(codeOf(() => parseTeamRef(value))).toBe('not_found');
    }
  });
});


describe('defineRoute', () => {
  const base = {
    method: 'get' as const,
    operationId: 'op',
    summary: 's',
    tags: [],
    auth: { callers: 'anyone' },
    responses: { 200: { description: 'ok' } },
    handler: async () => ({ data: null }),
  };

  it('converts OpenAPI templates to express paths', () => {
    expect(toExpressPath('/v1/teams/{team}/things/{thingId}')).toBe('/v1/teams/:team/things/:thingId');
  });

  it('refuses definitions that would drift from their documentation', () => {
    expect(() => defineRoute({ ...base, path: '/v1/things/{id}' })).toThrow(RouteDefinitionError);
    expect(() => defineRoute({ ...base, path: '/v1/things', request: { params: z.object({ id: z.string() }) } })).toThrow(/not in the path/);
    expect(() => defineRoute({ ...base, path: '/things' })).toThrow(/\/v1\//);
    expect(() =>
      defineRoute({ ...base, method: 'post', path: '/v1/things', request: { body: z.object({ nested: z.object({ a: z.string() }) }) } }),
    ).toThrow(/nested must be z\.strictObject/);
  });

  it('makes the top level of a body strict', () => {
    const route = defineRoute({ ...base, method: 'post', path: '/v1/things', request: { body: z.object({ a: z.string() }) } });
    expect(route.request!.body!.safeParse({ a: 'x', b: 1 }).success).toBe(false);
  });

  it('refuses the same route or operationId twice in one app', () => {
    const { logger } = memoryLogger();
    const options = { config: { appUrl: 'http://x.test', bodyLimitBytes: 100 }, logger, readiness: async () => ({ status: 'ok' as const, checks: {} }) };
    const a = defineRoute({ ...base, path: '/v1/a' });
    expect(() => createEdgeApp({ ...options, routes: [a, defineRoute({ ...base, path: '/v1/a', operationId: 'other' })] })).toThrow(/twice/);
    expect(() => createEdgeApp({ ...options, routes: [a, defineRoute({ ...base, path: '/v1/b' })] })).toThrow(/operationId/);
  });
});
