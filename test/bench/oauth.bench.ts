import { authorizeAsPerson, gatewayUser, pkcePair, type TestPlatform } from '../src';
import { load, percentile, printTable, realInfrastructure, startPlatformProcess } from './support';

/**
 * OAuth (issue 4's targets): refresh grants per second on real PostgreSQL (≥ 1,500/s on a 2-core machine) and
 * the cost of the /mcp token check. The platform runs as its own process; clients run here over loopback.
 * Each worker owns one connection and rotates its refresh token as fast as the server answers. The token
 * endpoint's limit of 60 per minute per client address is kept: the platform trusts the loopback proxy
 * (TRUST_PROXY=loopback) and each request names a different client address in X-Forwarded-For, as many
 * clients behind a proxy would. Run: `npm run bench -- oauth`.
 */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

async function main(): Promise<void> {
  const infrastructure = await realInfrastructure('oauth-bench');
  const process_ = await startPlatformProcess({ ...infrastructure.env, TRUST_PROXY: 'loopback', DATABASE_POOL_MAX: '30' });
  const platform = { url: (p: string) => `${process_.url}${p}`, origin: process_.origin } as TestPlatform;
  try {
    const user = await gatewayUser(platform, { email: 'bench@example.test', teamSlug: 'bench', gatewaySlug: 'bench' });
    const resource = `${process_.origin}/mcp/bench`;
    const registered = await fetch(platform.url('/oauth/register'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Bench', redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;

    let address = 0;
    const nextAddress = () => {
      address += 1;
      return `198.51.${(address >> 8) & 255}.${address & 255}`;
    };
    const token = async (form: Record<string, string>) => {
      const response = await fetch(platform.url('/oauth/token'), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextAddress() },
        body: new URLSearchParams(form).toString(),
      });
      return { status: response.status, body: (await response.json()) as { access_token?: string; refresh_token?: string; error?: string } };
    };

    // One connection per worker: authorize (consent is remembered after the first), exchange the code.
    const refreshTokens: string[] = [];
    let accessToken = '';
    for (let i = 0; i < WORKERS; i++) {
      const { verifier, challenge } = pkcePair();
      const url = new URL(platform.url('/oauth/authorize'));
      for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: 'S256', state: `s${i}`, resource })) {
        url.searchParams.set(k, v);
      }
      const outcome = await authorizeAsPerson(platform, user.person.client.cookieHeader(), url);
      const code = outcome.redirect.searchParams.get('code');
      if (!code) throw new Error(`no code: ${outcome.redirect.toString()}`);
      const exchanged = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier, resource });
      if (!exchanged.body.refresh_token) throw new Error(`exchange failed: ${JSON.stringify(exchanged.body)}`);
      refreshTokens.push(exchanged.body.refresh_token);
      accessToken = exchanged.body.access_token!;
    }

    // Refresh grants: every worker rotates its own token until the time is up.
    const latencies: number[] = [];
    let failures = 0;
    const until = Date.now() + SECONDS * 1000;
    await Promise.all(
      refreshTokens.map(async (first) => {
        let current = first;
        while (Date.now() < until) {
          const started = performance.now();
          const refreshed = await token({ grant_type: 'refresh_token', refresh_token: current, client_id: clientId, resource });
          latencies.push(performance.now() - started);
          if (refreshed.status !== 200 || !refreshed.body.refresh_token) {
            failures += 1;
            return;
          }
          current = refreshed.body.refresh_token;
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    process.stdout.write(
      `| refresh grants | ${WORKERS} workers | ${Math.round(latencies.length / SECONDS)}/s | p50 ${percentile(latencies, 50).toFixed(1)} ms | p99 ${percentile(latencies, 99).toFixed(1)} ms | failures ${failures} |\n\n`,
    );

    // The /mcp token check: a tiny answer after it (an authorised request without a session gets the data plane's
    // 400 at once); /healthz is the baseline without any check.
    const results = [];
    for (const connections of [1, 32]) {
      results.push(await load('GET /healthz (no check)', { url: platform.url('/healthz'), connections, durationSeconds: SECONDS }));
      results.push(
        await load('POST /mcp/bench (token check, then the data plane\'s 400: no session)', {
          url: platform.url('/mcp/bench'),
          headers: { authorization: `Bearer ${accessToken}` },
          connections,
          durationSeconds: SECONDS,
        }),
      );
    }
    printTable(results);
  } finally {
    await process_.stop();
    await infrastructure.cleanup();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
