import { z } from 'zod';
import { AppError } from '@platform/runtime';
import { defineRoute } from '../src';
import { startEdge, type RunningEdge, readJson } from './support';

const whoAmI = defineRoute({
  method: 'post',
  path: '/v1/whoami',
  operationId: 'whoAmI',
  summary: 'Echo the caller',
  tags: ['test'],
  auth: { callers: 'anyone with an API key' },
  request: { body: z.object({ note: z.string() }) },
  responses: { 200: { description: 'The caller' } },
  handler: async (ctx) => ({ data: { caller: ctx.auth, note: ctx.body.note } }),
});

let edge: RunningEdge;
const seen: string[] = [];
beforeAll(async () => {
  edge = await startEdge({
    routes: [whoAmI],
    authenticate: async (req, route) => {
      seen.push(route.operationId);
      const key = req.get('authorization');
      if (key !== 'Bearer good-key') throw AppError.unauthenticated();
      return { kind: 'api_key', name: 'ci' };
    },
  });
});
afterAll(() => edge.close());

describe('authenticate hook', () => {
  it('passes what it returns to the handler as ctx.auth', async () => {
    const response = await fetch(edge.url('/v1/whoami'), {
      method: 'POST',
      headers: { authorization: 'Bearer good-key', 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'hi' }),
    });
    expect(response.status).toBe(200);
    expect(await readJson(response)).toEqual({ data: { caller: { kind: 'api_key', name: 'ci' }, note: 'hi' } });
    expect(seen).toContain('whoAmI');
  });

  it('refuses before validation, so an anonymous caller learns nothing about the body', async () => {
    const response = await fetch(edge.url('/v1/whoami'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wrong: true }),
    });
    expect(response.status).toBe(401);
    const body = await readJson(response);
    expect(body.error.code).toBe('unauthenticated');
    expect(body.error.fields).toBeUndefined();
  });
});
