import { Client } from 'pg';
import { Pool } from 'undici';
import { authorizeAsPerson, gatewayUser, pkcePair, type TestPlatform } from '../src';
import { cpuSeconds, machineBusySeconds } from './process-cpu';
import { load, percentile, printTable, realInfrastructure, startPlatformProcess } from './support';

/**
 * OAuth (issue 4's targets): refresh grants per second on real PostgreSQL (≥ 1,500/s on a 2-core machine) and
 * the cost of the /mcp token check. The platform runs as its own process; clients run here over loopback.
 * Each worker owns one connection and rotates its refresh token as fast as the server answers. The token
 * endpoint's limit of 60 per minute per client address is kept: the platform trusts the loopback proxy
 * (TRUST_PROXY=loopback) and each request names a different client address in X-Forwarded-For, as many
 * clients behind a proxy would. Run: `npm run bench -- oauth`.
 *
 * Besides grants per second it reports CPU per grant (the platform's processes from /proc, and the whole machine
 * from /proc/stat, which includes PostgreSQL, Redis, Kafka and this load generator) and checks that every grant's
 * `oauth.token_issue` audit entry is stored (the identity service stores it in the rotation's own statement, so
 * none should arrive after the window). BENCH_SPLIT=1 runs the edge and the services as two processes;
 * BENCH_WARMUP_SECONDS (default 3) of grants precede the measured window; BENCH_TOKEN_CHECK=0 skips the /mcp token
 * check cases.
 */
const WORKERS = Number(process.env.BENCH_WORKERS ?? 32);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const TOKEN_CHECK = process.env.BENCH_TOKEN_CHECK !== '0';
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
    // undici's Pool rather than fetch: a lean client (one keep-alive connection per worker) so that the load
    // generator, which shares the machine's two cores with the platform, takes as little of them as it can.
    const pool = new Pool(process_.url, { connections: WORKERS, pipelining: 1 });
    const token = async (form: Record<string, string>) => {
      const response = await pool.request({
        path: '/oauth/token',
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': nextAddress() },
        body: new URLSearchParams(form).toString(),
      });
      return {
        status: response.statusCode,
        body: (await response.body.json()) as { access_token?: string; refresh_token?: string; error?: string },
      };
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

    const database = new Client({ connectionString: infrastructure.env.DATABASE_URL });
    await database.connect();
    const tokenIssueEntries = async () =>
      Number(
        (await database.query<{ n: string }>(`SELECT count(*) AS n FROM identity.audit_entries WHERE action = 'oauth.token_issue'`)).rows[0]!.n,
      );
    const issuedBefore = WORKERS; // one per code exchange
    const deadline = Date.now() + 30_000;
    while ((await tokenIssueEntries()) < issuedBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));

    // Refresh grants: every worker rotates its own token until the time is up; first a warm-up (the JIT compiles
    // the grant's path, pools and caches fill), then the measured window.
    const latencies: number[] = [];
    let failures = 0;
    let warmupGrants = 0;
    const current = [...refreshTokens];
    const rotate = (seconds: number, measured: boolean) => {
      const until = Date.now() + seconds * 1000;
      return Promise.all(
        current.map(async (_first, worker) => {
          while (Date.now() < until) {
            const started = performance.now();
            const refreshed = await token({ grant_type: 'refresh_token', refresh_token: current[worker]!, client_id: clientId, resource });
            if (refreshed.status !== 200 || !refreshed.body.refresh_token) {
              if (!measured) throw new Error(`warm-up grant failed: ${refreshed.status} ${JSON.stringify(refreshed.body)}`);
              latencies.push(performance.now() - started);
              failures += 1;
              return;
            }
            current[worker] = refreshed.body.refresh_token;
            if (measured) latencies.push(performance.now() - started);
            else warmupGrants += 1;
          }
        }),
      );
    };
    await rotate(WARMUP_SECONDS, false);
    const platformCpuBefore = cpuSeconds(process_.pids);
    const machineCpuBefore = machineBusySeconds();
    process.stderr.write('refresh window starts\n');
    await rotate(SECONDS, true);
    const windowEnded = Date.now();
    process.stderr.write('refresh window ends\n');
    const platformCpu = cpuSeconds(process_.pids) - platformCpuBefore;
    const machineCpu = machineBusySeconds() - machineCpuBefore;
    // Every grant's audit entry must be stored; it is written with the grant, so the wait should be none.
    const expected = issuedBefore + warmupGrants + latencies.length - failures;
    let stored = await tokenIssueEntries();
    while (stored < expected && Date.now() - windowEnded < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stored = await tokenIssueEntries();
    }
    const auditLagMs = Date.now() - windowEnded;
    await database.end();
    await pool.close();
    latencies.sort((a, b) => a - b);
    const grants = latencies.length;
    process.stdout.write(
      `| topology | workers | grants/s | p50 ms | p99 ms | failures | platform CPU ms/grant | machine CPU ms/grant | audit entries stored | last stored after window |\n` +
        `|---|---|---|---|---|---|---|---|---|---|\n` +
        `| ${process_.pids.length > 1 ? 'split' : 'all'} | ${WORKERS} | ${Math.round(grants / SECONDS)} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${failures} | ` +
        `${((platformCpu * 1000) / grants).toFixed(2)} | ${((machineCpu * 1000) / grants).toFixed(2)} | ${stored - issuedBefore - warmupGrants}/${expected - issuedBefore - warmupGrants} | ${auditLagMs} ms |\n\n`,
    );
    if (!TOKEN_CHECK) return;

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
