import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { clientAddress, compileTrustProxy } from '../src/client-address';

/**
 * What is served ahead of express must name the client exactly as express's `req.ip` does under the same
 * TRUST_PROXY. Each setting is given to express as express takes it (the value TRUST_PROXY's text stands for) and
 * to `compileTrustProxy` as TRUST_PROXY's text; both answers are read for the same real request.
 */
const SETTINGS: [text: string | undefined, expressValue: boolean | number | string | undefined][] = [
  [undefined, undefined],
  ['false', false],
  ['true', true],
  ['0', 0],
  ['1', 1],
  ['2', 2],
  ['loopback', 'loopback'],
  [' 10.0.0.0/8 , loopback ', '10.0.0.0/8 , loopback'],
  ['uniquelocal', 'uniquelocal'],
  ['127.0.0.1, 203.0.113.7', '127.0.0.1, 203.0.113.7'],
];

const FORWARDED: (string | undefined)[] = [
  undefined,
  '',
  '203.0.113.7',
  '198.51.100.1, 203.0.113.7',
  '198.51.100.1, 10.1.2.3',
  '198.51.100.1,10.1.2.3 , 127.0.0.1',
  'not-an-address, 10.0.0.1',
  '2001:db8::1, ::1',
];

let server: Server;
let port: number;

beforeAll(async () => {
  const apps: express.Express[] = [];
  for (const [text, value] of SETTINGS) {
    const app = express();
    if (value !== undefined) app.set('trust proxy', value);
    const trust = compileTrustProxy(text);
    app.get('/', (req, res) => {
      res.json({ express: req.ip, edge: clientAddress(req, trust) });
    });
    apps.push(app);
  }
  server = createServer((req, res) => apps[Number(req.headers['x-setting'])]!(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

it.each(SETTINGS.map(([text], index) => [JSON.stringify(text), index]))('names the client as express does with TRUST_PROXY=%s', async (_text, index) => {
  for (const forwarded of FORWARDED) {
    const headers: Record<string, string> = { 'x-setting': String(index) };
    if (forwarded !== undefined) headers['x-forwarded-for'] = forwarded;
    const answer = (await (await fetch(`http://127.0.0.1:${port}/`, { headers })).json()) as { express: string; edge: string };
    expect({ forwarded, address: answer.edge }).toEqual({ forwarded, address: answer.express });
  }
});

it('passes an already compiled setting through, as express does', () => {
  const trust = compileTrustProxy('loopback');
  expect(compileTrustProxy(trust)).toBe(trust);
});
