import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { metricsRegistry } from '@platform/runtime';
import { MAX_DISCOVERIES_RUNNING } from '../../services/catalog/src/domain/discovery-slots';
import { MAX_DISCOVERY_BYTES, MAX_DISCOVERY_CONTAINERS } from '../../services/catalog/src/domain/upstream-fetch';
import { isCI } from '../src/infra';

/**
 * helm/platform rendered with `helm template` and read back: what the chart promises about ports and probes, the
 * network, shutdown, secrets and budgets. Needs helm on PATH (deploy/provision.sh --helm); skipped without it, failing under CI.
 */
const ROOT = path.resolve(__dirname, '../..');
const CHART = path.join(ROOT, 'helm/platform');
const ALL_IN_ONE = ['-f', path.join(CHART, 'values-all-in-one.yaml')];
const GENERATE = ['--set', 'secrets.generate=true'];
const KEYS = ['--set', 'secrets.ENCRYPTION_KEY=k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=', '--set', 'secrets.API_KEY_PEPPER=cGVwcGVyLXBlcHBlci1wZXBwZXItcGVwcGVyLXBlcHBlcg=='];
const SERVICE_TARGETS = ['identity', 'catalog', 'agents', 'knowledge', 'billing', 'notifications'];

/**
 * Run by a child node (argv: bytes, containers, answers): keeps about 95 MiB as an idle process's heap does (94 MiB
 * used, measured on a catalog), then holds what parsing `answers` upstream answers builds in the worst shape the
 * catalog's bounds let through (docs/catalog.md, How many bytes): `containers` empty objects, and the rest of `bytes`
 * as one object's keys. Exits 0 when that fits the heap; V8 aborts when it does not.
 */
const HOLD_DISCOVERIES = `
  const [bytes, containers, answers] = process.argv.slice(1).map(Number);
  globalThis.idle = Array.from({ length: 1300000 }, (_, i) => ({ i, s: 'x' + i }));
  globalThis.held = [];
  const objects = Array(containers - 2).fill('{}').join(',');
  const keys = Math.floor((bytes - objects.length - 8) / 12);
  for (let k = 0; k < answers; k++) {
    globalThis.held.push(JSON.parse('[[' + objects + '],{' + Array.from({ length: keys }, (_, i) => '"k' + i.toString(36) + '":0').join(',') + '}]'));
  }
`;

interface Probe {
  httpGet?: { path: string; port: string | number };
  grpc?: { port: number };
  tcpSocket?: unknown;
  exec?: unknown;
}
interface Container {
  name: string;
  ports?: Array<{ name: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string }>;
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface Peer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec?: {
    ports?: Array<{ name: string; port: number; targetPort?: string | number }>;
    rules?: Array<{ http: { paths: Array<{ backend: { service: { name: string; port: { name?: string; number?: number } } } }> } }>;
    replicas?: number;
    template?: { spec: { terminationGracePeriodSeconds: number; containers: Container[]; volumes?: Array<Record<string, unknown> & { name: string }> } };
    podSelector?: { matchLabels: Record<string, string> };
    policyTypes?: string[];
    ingress?: Array<{ from?: Peer[]; ports?: Array<{ port: number }> }>;
    maxUnavailable?: number | string;
    minAvailable?: number | string;
  };
}

const helmFound = spawnSync('helm', ['version', '--short'], { encoding: 'utf8' }).status === 0;

function render(...args: string[]): Manifest[] {
  return renderRelease('platform', ...args);
}

function renderRelease(release: string, ...args: string[]): Manifest[] {
  const out = execFileSync('helm', ['template', release, CHART, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((doc): doc is Manifest => doc !== null);
}

/** The render's error message (helm exits non-zero), or '' when it rendered. */
function renderError(...args: string[]): string {
  const result = spawnSync('helm', ['template', 'platform', CHART, ...args], { encoding: 'utf8' });
  return result.status === 0 ? '' : result.stderr;
}

function find(docs: Manifest[], kind: string, name: string): Manifest {
  const found = docs.find((doc) => doc.kind === kind && doc.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in [${docs.map((d) => `${d.kind}/${d.metadata.name}`).join(', ')}]`);
  return found;
}

function container(docs: Manifest[], deployment: string): Container {
  return find(docs, 'Deployment', deployment).spec!.template!.spec.containers[0];
}

function env(c: Container, name: string): string | undefined {
  return c.env?.find((e) => e.name === name)?.value;
}

/** The probe kind and target, without the timing. */
function probe(p: Probe | undefined): Probe | undefined {
  if (!p) return undefined;
  const { httpGet, grpc, tcpSocket, exec } = p;
  return Object.fromEntries(Object.entries({ httpGet, grpc, tcpSocket, exec }).filter(([, v]) => v !== undefined)) as Probe;
}

const RELEASE = { 'app.kubernetes.io/name': 'platform', 'app.kubernetes.io/instance': 'platform' };

(helmFound || isCI() ? describe : describe.skip)(`helm/platform${helmFound ? '' : ' (skipped: helm not on PATH)'}`, () => {
  it('finds helm (under CI, deploy/provision.sh --helm provides it)', () => {
    expect(helmFound).toBe(true);
  });

  describe('gRPC reachable only by the release', () => {
    it('microservices: service targets listen on the pod network, and only the release (and grpcFrom) may reach the port', () => {
      const docs = render(...GENERATE);
      for (const name of SERVICE_TARGETS) {
        const c = container(docs, `platform-${name}`);
        expect(env(c, 'GRPC_HOST')).toBe('0.0.0.0');
        expect(c.ports?.map((p) => p.name)).toEqual(['ops', 'grpc']);
      }
      const policy = find(docs, 'NetworkPolicy', 'platform');
      expect(policy.spec!.podSelector!.matchLabels).toEqual(RELEASE);
      expect(policy.spec!.policyTypes).toEqual(['Ingress']);
      const grpcRules = policy.spec!.ingress!.filter((rule) => rule.ports?.some((p) => p.port === 50051));
      // The release's pods reach only the gRPC port: nothing of the release calls another pod's HTTP or ops port.
      expect(grpcRules).toEqual([{ from: [{ podSelector: { matchLabels: RELEASE } }], ports: [{ port: 50051, protocol: 'TCP' }] }]);
      // Prometheus: the ops port only, from every pod in the cluster by default.
      expect(policy.spec!.ingress).toEqual([
        { from: [{ podSelector: { matchLabels: RELEASE } }], ports: [{ port: 50051, protocol: 'TCP' }] },
        { from: [{ namespaceSelector: {} }], ports: [{ port: 8081, protocol: 'TCP' }] },
      ]);

      const http = find(docs, 'NetworkPolicy', 'platform-http');
      expect(http.spec!.podSelector!.matchLabels).toEqual({ ...RELEASE, 'app.kubernetes.io/component': 'gateway' });
      expect(http.spec!.ingress).toEqual([{ ports: [{ port: 8080, protocol: 'TCP' }] }]);
      // Every rule names its ports (a rule without ports admits all of them), and every rule that admits 50051
      // names its sources: none admits it from anywhere.
      for (const doc of docs.filter((d) => d.kind === 'NetworkPolicy')) {
        for (const rule of doc.spec!.ingress!) {
          expect(rule.ports?.length).toBeGreaterThan(0);
          if (rule.ports?.some((p) => p.port === 50051)) expect(rule.from?.length).toBeGreaterThan(0);
        }
      }
    });

    it('takes httpFrom, metricsFrom and grpcFrom as peers, and renders no policy when disabled', () => {
      const monitoring = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
      const ingress = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
      const other = { podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'other' } } };
      const docs = render(
        ...GENERATE,
        '--set-json', `networkPolicy.metricsFrom=${JSON.stringify([monitoring])}`,
        '--set-json', `networkPolicy.httpFrom=${JSON.stringify([ingress])}`,
        '--set-json', `networkPolicy.grpcFrom=${JSON.stringify([other])}`,
      );
      const policy = find(docs, 'NetworkPolicy', 'platform');
      expect(policy.spec!.ingress).toEqual([
        { from: [{ podSelector: { matchLabels: RELEASE } }, other], ports: [{ port: 50051, protocol: 'TCP' }] },
        { from: [monitoring], ports: [{ port: 8081, protocol: 'TCP' }] },
      ]);
      expect(find(docs, 'NetworkPolicy', 'platform-http').spec!.ingress).toEqual([{ ports: [{ port: 8080, protocol: 'TCP' }], from: [ingress] }]);

      const none = render(...GENERATE, '--set-json', 'networkPolicy.metricsFrom=[]');
      expect(find(none, 'NetworkPolicy', 'platform').spec!.ingress).toEqual([{ from: [{ podSelector: { matchLabels: RELEASE } }], ports: [{ port: 50051, protocol: 'TCP' }] }]);
      // All-in-one without metricsFrom: no rule at all in the release-wide policy (only the edge's HTTP port is open).
      const aioNone = render(...ALL_IN_ONE, ...GENERATE, '--set-json', 'networkPolicy.metricsFrom=[]');
      expect(find(aioNone, 'NetworkPolicy', 'platform').spec!.ingress).toEqual([]);
      expect(find(aioNone, 'NetworkPolicy', 'platform-http').spec!.ingress).toEqual([{ ports: [{ port: 8080, protocol: 'TCP' }] }]);
      expect(render(...GENERATE, '--set', 'networkPolicy.enabled=false').filter((d) => d.kind === 'NetworkPolicy')).toEqual([]);
    });

    it('all-in-one: gRPC stays on loopback, off the Service and out of the policy', () => {
      const docs = render(...ALL_IN_ONE, ...GENERATE);
      const c = container(docs, 'platform');
      expect(env(c, 'GRPC_HOST')).toBeUndefined(); // --target=all binds 127.0.0.1 by default
      expect(env(c, 'GRPC_PORT')).toBe('50051');
      expect(c.ports?.map((p) => p.name)).toEqual(['http', 'ops']);
      expect(find(docs, 'Service', 'platform').spec!.ports!.map((p) => p.port)).toEqual([8080]);
      const policies = docs.filter((d) => d.kind === 'NetworkPolicy');
      expect(policies.map((p) => p.metadata.name)).toEqual(['platform', 'platform-http']);
      expect(JSON.stringify(policies)).not.toContain('50051');
      // Prometheus on the ops port; the HTTP port through platform-http.
      expect(find(docs, 'NetworkPolicy', 'platform').spec!.ingress).toEqual([{ from: [{ namespaceSelector: {} }], ports: [{ port: 8081, protocol: 'TCP' }] }]);
      expect(find(docs, 'NetworkPolicy', 'platform-http').spec!.podSelector!.matchLabels).toEqual({ ...RELEASE, 'app.kubernetes.io/component': 'all' });
    });
  });

  describe('ports and probes', () => {
    const healthz: Probe = { httpGet: { path: '/healthz', port: 'ops' } };
    const readyz: Probe = { httpGet: { path: '/readyz', port: 'ops' } };

    it('every pod has the ops listener (OPS_PORT, container port ops); only the edge pods have the public http port', () => {
      for (const docs of [render(...GENERATE), render(...ALL_IN_ONE, ...GENERATE)]) {
        const deployments = docs.filter((d) => d.kind === 'Deployment');
        expect(deployments.length).toBeGreaterThan(0);
        for (const d of deployments) {
          const c = d.spec!.template!.spec.containers[0];
          expect(c.ports).toContainEqual({ name: 'ops', containerPort: 8081, protocol: 'TCP' });
          expect(env(c, 'OPS_PORT')).toBe('8081');
        }
      }
      const docs = render(...GENERATE);
      for (const name of SERVICE_TARGETS) {
        const c = container(docs, `platform-${name}`);
        expect(c.ports?.map((p) => p.name)).not.toContain('http');
        expect(env(c, 'PORT')).toBeUndefined();
        // A service target's Service publishes its gRPC port only.
        expect(find(docs, 'Service', `platform-${name}`).spec!.ports!.map((p) => p.name)).toEqual(['grpc']);
      }
      const gateway = container(docs, 'platform-gateway');
      expect(gateway.ports?.map((p) => [p.name, p.containerPort])).toEqual([['http', 8080], ['ops', 8081]]);
      expect(env(gateway, 'PORT')).toBe('8080');
      expect(find(docs, 'Service', 'platform-gateway').spec!.ports!.map((p) => p.name)).toEqual(['http']);

      const all = container(render(...ALL_IN_ONE, ...GENERATE), 'platform');
      expect(env(all, 'PORT')).toBe('8080');
      expect(env(all, 'OPS_PORT')).toBe('8081');
    });

    it('no Service and no Ingress carries the ops port', () => {
      for (const docs of [render(...GENERATE, '--set', 'ingress.enabled=true'), render(...ALL_IN_ONE, ...GENERATE, '--set', 'ingress.enabled=true')]) {
        for (const svc of docs.filter((d) => d.kind === 'Service')) {
          for (const port of svc.spec!.ports!) {
            expect(port.port).not.toBe(8081);
            expect(port.targetPort).not.toBe('ops');
          }
        }
        const ingress = docs.find((d) => d.kind === 'Ingress')!;
        const backends = ingress.spec!.rules!.flatMap((rule) => rule.http.paths.map((path) => path.backend.service));
        expect(backends.length).toBeGreaterThan(0);
        for (const backend of backends) expect(backend.port).toEqual({ name: 'http' });
      }
    });

    it('gateway and all-in-one: startup and liveness on /healthz, readiness on /readyz, all on the ops port', () => {
      for (const c of [container(render(...GENERATE), 'platform-gateway'), container(render(...ALL_IN_ONE, ...GENERATE), 'platform')]) {
        expect(probe(c.startupProbe)).toEqual(healthz);
        expect(probe(c.livenessProbe)).toEqual(healthz);
        expect(probe(c.readinessProbe)).toEqual(readyz);
      }
    });

    it('service targets: startup and liveness on /healthz (ops), readiness by gRPC health, never liveness', () => {
      const docs = render(...GENERATE);
      for (const name of SERVICE_TARGETS) {
        const c = container(docs, `platform-${name}`);
        expect(probe(c.startupProbe)).toEqual(healthz);
        // gRPC health is NOT_SERVING while the database, Redis or Kafka fails: a liveness probe on it would restart
        // every service pod during a dependency's outage.
        expect(probe(c.livenessProbe)).toEqual(healthz);
        expect(probe(c.readinessProbe)).toEqual({ grpc: { port: 50051 } });
      }
    });

    it('follows ports.ops, and refuses an ops port equal to the http port', () => {
      const docs = render(...GENERATE, '--set', 'ports.ops=9091');
      expect(container(docs, 'platform-identity').ports).toContainEqual({ name: 'ops', containerPort: 9091, protocol: 'TCP' });
      expect(env(container(docs, 'platform-gateway'), 'OPS_PORT')).toBe('9091');
      expect(find(docs, 'NetworkPolicy', 'platform').spec!.ingress).toContainEqual({ from: [{ namespaceSelector: {} }], ports: [{ port: 9091, protocol: 'TCP' }] });
      expect(renderError(...GENERATE, '--set', 'ports.ops=8080')).toContain('ports.ops must differ from ports.http');
    });
  });

  describe('shutdown', () => {
    it('sleeps in preStop, and the grace period outlasts the sleep plus SHUTDOWN_TIMEOUT_SECONDS', () => {
      for (const docs of [render(...GENERATE), render(...ALL_IN_ONE, ...GENERATE)]) {
        const deployments = docs.filter((d) => d.kind === 'Deployment');
        expect(deployments.length).toBeGreaterThan(0);
        for (const d of deployments) {
          const pod = d.spec!.template!.spec;
          expect(pod.containers[0].lifecycle).toEqual({ preStop: { exec: { command: ['/bin/sleep', '5'] } } });
          expect(pod.terminationGracePeriodSeconds).toBe(5 + 25 + 10);
        }
      }
      const longer = render(...GENERATE, '--set', 'shutdown.preStopSleepSeconds=10', '--set', 'config.SHUTDOWN_TIMEOUT_SECONDS=60');
      const pod = find(longer, 'Deployment', 'platform-gateway').spec!.template!.spec;
      expect(pod.containers[0].lifecycle!.preStop!.exec!.command).toEqual(['/bin/sleep', '10']);
      expect(pod.terminationGracePeriodSeconds).toBe(10 + 60 + 10);

      const off = find(render(...GENERATE, '--set', 'shutdown.preStopSleepSeconds=0'), 'Deployment', 'platform-identity').spec!.template!.spec;
      expect(off.containers[0].lifecycle).toBeUndefined();
      expect(off.terminationGracePeriodSeconds).toBe(35);
      // The process exits by itself at SHUTDOWN_TIMEOUT_SECONDS plus 5 s (main.ts): a SIGKILL must not come first.
      for (const margin of [0, 5]) expect(renderError(...GENERATE, '--set', `shutdown.graceMarginSeconds=${margin}`)).toContain('graceMarginSeconds must be at least 6');
      expect(find(render(...GENERATE, '--set', 'shutdown.graceMarginSeconds=6'), 'Deployment', 'platform-gateway').spec!.template!.spec.terminationGracePeriodSeconds).toBe(5 + 25 + 6);
    });
  });

  describe('ENCRYPTION_KEY and API_KEY_PEPPER', () => {
    it('refuses to render generated keys without secrets.generate (no live Secret outside helm install/upgrade)', () => {
      const error = renderError();
      expect(error).toContain('secrets.ENCRYPTION_KEY and secrets.API_KEY_PEPPER');
      expect(error).toContain('secrets.generate=true');
      expect(renderError(...ALL_IN_ONE)).toContain('secrets.ENCRYPTION_KEY');
      expect(renderError('--set', 'secrets.ENCRYPTION_KEY=k1:abc')).toContain('empty secrets.API_KEY_PEPPER,');
    });

    it('renders explicit keys as given, nothing for an existing Secret, and generated keys only when asked', () => {
      const secret = find(render(...KEYS), 'Secret', 'platform-secrets');
      expect(Buffer.from(secret.data!.ENCRYPTION_KEY, 'base64').toString()).toBe('k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=');
      expect(Buffer.from(secret.data!.API_KEY_PEPPER, 'base64').toString()).toBe('cGVwcGVyLXBlcHBlci1wZXBwZXItcGVwcGVyLXBlcHBlcg==');

      const existing = render('--set', 'secrets.existingSecret=mine');
      expect(existing.filter((d) => d.kind === 'Secret')).toEqual([]);
      expect(JSON.stringify(container(existing, 'platform-gateway'))).toContain('"secretRef":{"name":"mine"}');

      const generated = find(render(...GENERATE), 'Secret', 'platform-secrets');
      // randBytes 32, base64: a 32-byte key.
      expect(Buffer.from(Buffer.from(generated.data!.ENCRYPTION_KEY, 'base64').toString(), 'base64')).toHaveLength(32);
    });
  });

  describe('configuration', () => {
    it('keeps BOOTSTRAP_ADMIN_PASSWORD in the Secret and refuses secret values in config', () => {
      const docs = render(...KEYS, '--set', 'secrets.BOOTSTRAP_ADMIN_PASSWORD=correct horse', '--set', 'config.BOOTSTRAP_ADMIN_EMAIL=admin@example.com');
      const secret = find(docs, 'Secret', 'platform-secrets');
      expect(Buffer.from(secret.data!.BOOTSTRAP_ADMIN_PASSWORD, 'base64').toString()).toBe('correct horse');
      const config = find(docs, 'ConfigMap', 'platform-config');
      expect(config.data!.BOOTSTRAP_ADMIN_EMAIL).toBe('admin@example.com');
      expect(config.data).not.toHaveProperty('BOOTSTRAP_ADMIN_PASSWORD');
      expect(find(render(...KEYS), 'Secret', 'platform-secrets').data).not.toHaveProperty('BOOTSTRAP_ADMIN_PASSWORD');

      for (const key of ['BOOTSTRAP_ADMIN_PASSWORD', 'DATABASE_URL', 'ENCRYPTION_KEY']) {
        expect(renderError(...KEYS, '--set', `config.${key}=x`)).toContain(`config.${key} would land in the ConfigMap`);
      }
    });

    it('renders the Kafka SASL password only into the Secret, and the other Kafka security settings as config', () => {
      const password = 'kafka-sasl-password-9f3c';
      const kafka = [
        '--set', 'config.KAFKA_SSL=true', '--set', 'config.KAFKA_SSL_CA_FILE=/etc/platform/kafka-ca/ca.crt',
        '--set', 'config.KAFKA_SASL_MECHANISM=scram-sha-512', '--set', 'config.KAFKA_SASL_USERNAME=mcp-platform',
        '--set', `secrets.KAFKA_SASL_PASSWORD=${password}`,
      ];
      for (const docs of [render(...KEYS, ...kafka), render(...ALL_IN_ONE, ...KEYS, ...kafka)]) {
        const secret = find(docs, 'Secret', 'platform-secrets');
        expect(Buffer.from(secret.data!.KAFKA_SASL_PASSWORD, 'base64').toString()).toBe(password);
        expect(find(docs, 'ConfigMap', 'platform-config').data).toMatchObject({
          KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: '/etc/platform/kafka-ca/ca.crt', KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_SASL_USERNAME: 'mcp-platform',
        });
        // Nowhere else, in clear or base64 (the pods' checksum annotation is a digest).
        const others = JSON.stringify(docs.filter((d) => d !== secret));
        expect(others).not.toContain(password);
        expect(others).not.toContain(Buffer.from(password).toString('base64'));
      }
      expect(find(render(...KEYS), 'Secret', 'platform-secrets').data).not.toHaveProperty('KAFKA_SASL_PASSWORD');
      expect(renderError(...KEYS, '--set', `config.KAFKA_SASL_PASSWORD=${password}`)).toContain('config.KAFKA_SASL_PASSWORD would land in the ConfigMap');
    });

    it("rolls the pods when a secret value changes, by a digest keyed by the release's own keys (not of the values alone)", () => {
      const checksums = (...args: string[]) =>
        new Set(
          render(...args)
            .filter((doc) => doc.kind === 'Deployment')
            .map((doc) => (doc.spec!.template as unknown as { metadata: { annotations: Record<string, string> } }).metadata.annotations['checksum/secret']),
        );
      const database = ['--set', 'secrets.DATABASE_URL=postgres://platform:weak-password@db:5432/platform'];
      const [first] = checksums(...KEYS, ...database);
      expect(checksums(...KEYS, ...database)).toEqual(new Set([first]));
      expect(first).toMatch(/^[0-9a-f]{64}$/);
      expect(checksums(...KEYS, '--set', 'secrets.DATABASE_URL=postgres://platform:other-password@db:5432/platform')).not.toContain(first);
      // The same guessable values with another ENCRYPTION_KEY give another digest: a guess cannot be checked without it.
      const otherKey = ['--set', 'secrets.ENCRYPTION_KEY=k1:ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=', '--set', `secrets.API_KEY_PEPPER=${KEYS[3]!.split('=').slice(1).join('=')}`];
      expect(checksums(...otherKey, ...database)).not.toContain(first);
      // Keys the values do not hold (generated here; the live Secret's under helm upgrade) enter it too: the values
      // alone, all guessable, never give the digest.
      expect(checksums(...GENERATE, ...database)).not.toEqual(checksums(...GENERATE, ...database));
    });

    it('sets PLATFORM_VERSION from the image tag, the chart appVersion by default', () => {
      expect(env(container(render(...KEYS), 'platform-identity'), 'PLATFORM_VERSION')).toBe('0.1.0');
      expect(env(container(render(...KEYS, '--set', 'image.tag=1.2.3'), 'platform-gateway'), 'PLATFORM_VERSION')).toBe('1.2.3');
      const own = render(...KEYS, '--set', 'config.PLATFORM_VERSION=custom');
      expect(env(container(own, 'platform-gateway'), 'PLATFORM_VERSION')).toBeUndefined();
      expect(find(own, 'ConfigMap', 'platform-config').data!.PLATFORM_VERSION).toBe('custom');
    });

    it('keeps releases sharing a Redis or a Kafka apart: key and topic prefixes of the namespace and release, unless config names them', () => {
      const config = (release: string, ...args: string[]) => renderRelease(release, ...KEYS, ...args).find((doc) => doc.kind === 'ConfigMap')!.data!;
      const prefixes = (data: Record<string, string>) => [data.REDIS_KEY_PREFIX, data.KAFKA_TOPIC_PREFIX];
      expect(prefixes(config('platform'))).toEqual(['default.platform:', 'default.platform.']);
      expect(prefixes(config('tools', '--namespace', 'team-a'))).toEqual(['team-a.tools:', 'team-a.tools.']);
      expect(prefixes(config('platform', '--namespace', 'team-a', ...ALL_IN_ONE))).toEqual(['team-a.platform:', 'team-a.platform.']);
      // Named (empty too: one installation alone on its Redis and Kafka), they are used as given, once.
      expect(prefixes(config('platform', '--set', 'config.REDIS_KEY_PREFIX=shared:', '--set', 'config.KAFKA_TOPIC_PREFIX='))).toEqual(['shared:', '']);
    });

    it('re-owns a volume only when its root is not the pods\' group already (fsGroupChangePolicy OnRootMismatch)', () => {
      for (const docs of [render(...KEYS), render(...KEYS, ...ALL_IN_ONE)]) {
        const pods = docs.filter((doc) => doc.kind === 'Deployment').map((doc) => (doc.spec!.template!.spec as unknown as { securityContext: Record<string, unknown> }).securityContext);
        expect(pods.length).toBeGreaterThan(0);
        for (const context of pods) expect(context).toMatchObject({ fsGroup: 10001, fsGroupChangePolicy: 'OnRootMismatch' });
      }
    });

    it('leaves tracing to the OTEL variables: no OTEL_SDK_DISABLED by default', () => {
      expect(find(render(...KEYS), 'ConfigMap', 'platform-config').data).not.toHaveProperty('OTEL_SDK_DISABLED');
    });

    it('gives the all-in-one process 1Gi requested and 2Gi at most', () => {
      expect(container(render(...ALL_IN_ONE, ...KEYS), 'platform').resources).toEqual({ requests: { cpu: '250m', memory: '1Gi' }, limits: { memory: '2Gi' } });
    });
  });

  describe('memory', () => {
    /** A Kubernetes quantity of bytes (`256Mi`, `2Gi`, `1G`, plain bytes) in MiB. */
    function mib(quantity: string): number {
      const match = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|K|M|G)?$/.exec(quantity);
      if (!match) throw new Error(`unexpected quantity ${quantity}`);
      const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9, '': 1 }[match[2] ?? ''] as number;
      return (Number(match[1]) * unit) / 2 ** 20;
    }

    it('requests at least what an idle process holds (230-245 MiB resident, measured) for every target', () => {
      const docs = render(...KEYS);
      const deployments = docs.filter((d) => d.kind === 'Deployment');
      expect(deployments.map((d) => d.metadata.name).sort()).toEqual(['platform-gateway', ...SERVICE_TARGETS.map((t) => `platform-${t}`)].sort());
      for (const d of deployments) {
        const resources = d.spec!.template!.spec.containers[0].resources!;
        expect([d.metadata.name, mib(resources.requests!.memory!) >= 256]).toEqual([d.metadata.name, true]);
        expect([d.metadata.name, mib(resources.limits!.memory!) >= mib(resources.requests!.memory!)]).toEqual([d.metadata.name, true]);
      }
    });

    it("the catalog's heap holds as many worst-case discoveries as it runs at once beside an idle process's own; the default one does not", () => {
      const limit = mib(container(render(...KEYS), 'platform-catalog').resources!.limits!.memory!);
      // The image's node flags (deploy/Dockerfile ENTRYPOINT, docs/performance.md Node flags).
      const dockerfile = readFileSync(path.join(ROOT, 'deploy/Dockerfile'), 'utf8');
      const semiSpace = /--max-semi-space-size=(\d+)/.exec(dockerfile)![1]!;
      // Node sizes V8's old generation from the container's memory limit (cgroup): half of it (measured under 512Mi,
      // 1Gi, 1.5Gi and 2Gi limits), the young generation coming on top. The child gets that heap explicitly.
      const holds = (oldSpaceMiB: number, answers: number) =>
        spawnSync(
          process.execPath,
          [`--max-old-space-size=${Math.floor(oldSpaceMiB)}`, `--max-semi-space-size=${semiSpace}`, '-e', HOLD_DISCOVERIES, String(MAX_DISCOVERY_BYTES), String(MAX_DISCOVERY_CONTAINERS), String(answers)],
          { encoding: 'utf8', env: { PATH: process.env.PATH } },
        ).status === 0;
      expect(holds(limit / 2, MAX_DISCOVERIES_RUNNING)).toBe(true);
      // What 512Mi (every other target's limit) gives does not hold two (one is at its edge). Also shows that the
      // harness sees a process run out of heap.
      expect(holds(512 / 2, 2)).toBe(false);
    });
  });

  describe('all-in-one replicas', () => {
    const URLS: Record<string, string> = { 'secrets.DATABASE_URL': 'postgres://platform@db:5432/platform', 'secrets.REDIS_URL': 'redis://redis:6379', 'config.KAFKA_BROKERS': 'kafka:9092' };
    const sets = (values: Record<string, string>) => Object.entries(values).flatMap(([key, value]) => ['--set', `${key}=${value}`]);
    const EXTERNAL = sets(URLS);

    it('refuses a second replica while any of the database, cache or bus is embedded (each replica would be a platform of its own)', () => {
      expect(find(render(...ALL_IN_ONE, ...KEYS), 'Deployment', 'platform').spec!.replicas).toBe(1);
      expect(renderError(...ALL_IN_ONE, ...KEYS, '--set', 'allInOne.replicas=2')).toContain('allInOne.replicas above 1 needs external PostgreSQL, Redis and Kafka');
      // One of the three missing is enough to refuse.
      for (const dropped of Object.keys(URLS)) {
        const partial = sets(Object.fromEntries(Object.entries(URLS).filter(([key]) => key !== dropped)));
        expect([dropped, renderError(...ALL_IN_ONE, ...KEYS, ...partial, '--set', 'allInOne.replicas=2')]).toEqual([dropped, expect.stringContaining('allInOne.replicas above 1')]);
      }
    });

    it('takes more replicas with external PostgreSQL, Redis and Kafka (the URLs given, or an existing Secret or extraEnvFrom)', () => {
      expect(find(render(...ALL_IN_ONE, ...KEYS, ...EXTERNAL, '--set', 'allInOne.replicas=2'), 'Deployment', 'platform').spec!.replicas).toBe(2);
      const existing = render(...ALL_IN_ONE, '--set', 'secrets.existingSecret=mine', '--set', 'config.KAFKA_BROKERS=kafka:9092', '--set', 'allInOne.replicas=3');
      expect(find(existing, 'Deployment', 'platform').spec!.replicas).toBe(3);
      const envFrom = render(...ALL_IN_ONE, ...KEYS, '--set-json', 'extraEnvFrom=[{"secretRef":{"name":"infra"}}]', '--set', 'allInOne.replicas=2');
      expect(find(envFrom, 'Deployment', 'platform').spec!.replicas).toBe(2);
    });
  });

  describe('extra volumes', () => {
    it('mounts extraVolumes where extraVolumeMounts say, in every pod of both layouts (a private CA for NODE_EXTRA_CA_CERTS)', () => {
      const volume = { name: 'private-ca', configMap: { name: 'private-ca' } };
      const mount = { name: 'private-ca', mountPath: '/etc/platform/ca', readOnly: true };
      const args = [
        '--set-json', `extraVolumes=${JSON.stringify([volume])}`,
        '--set-json', `extraVolumeMounts=${JSON.stringify([mount])}`,
        '--set-json', `extraEnv=${JSON.stringify([{ name: 'NODE_EXTRA_CA_CERTS', value: '/etc/platform/ca/ca.crt' }])}`,
      ];
      for (const docs of [render(...KEYS, ...args), render(...ALL_IN_ONE, ...KEYS, ...args)]) {
        const deployments = docs.filter((d) => d.kind === 'Deployment');
        expect(deployments.length).toBeGreaterThan(0);
        for (const d of deployments) {
          const pod = d.spec!.template!.spec;
          expect(pod.volumes).toContainEqual(volume);
          // The chart's own volumes stay: /tmp (tsx's cache) and /data under the read-only root filesystem.
          expect(pod.volumes!.map((v) => v.name)).toEqual(['tmp', 'data', 'private-ca']);
          expect(pod.containers[0].volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }, { name: 'data', mountPath: '/data' }, mount]);
          expect(env(pod.containers[0], 'NODE_EXTRA_CA_CERTS')).toBe('/etc/platform/ca/ca.crt');
        }
      }
      const plain = container(render(...KEYS), 'platform-identity');
      expect(plain.volumeMounts?.map((m) => m.name)).toEqual(['tmp', 'data']);
    });
  });

  describe('Prometheus Operator resources', () => {
    const MONITORING = ['--set', 'monitoring.podMonitor.enabled=true', '--set', 'monitoring.prometheusRule.enabled=true'];
    type Rule = { alert: string; expr: string; for?: string; labels: { severity: string } };
    const rules = (docs: Manifest[]) =>
      (find(docs, 'PrometheusRule', 'platform') as unknown as { spec: { groups: Array<{ rules: Rule[] }> } }).spec.groups.flatMap((g) => g.rules);

    it('renders none by default (they need the operator\'s CRDs)', () => {
      const kinds = render(...KEYS).map((doc) => doc.kind);
      expect(kinds).not.toContain('PodMonitor');
      expect(kinds).not.toContain('PrometheusRule');
    });

    it('scrapes /metrics on the ops port of every pod of the release, microservices and all-in-one alike', () => {
      for (const layout of [[], ALL_IN_ONE]) {
        const docs = render(...KEYS, ...layout, ...MONITORING);
        const monitor = find(docs, 'PodMonitor', 'platform') as unknown as {
          spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: Array<{ port: string; path: string }> };
        };
        expect(monitor.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'ops', path: '/metrics' })]);
        const deployments = docs.filter((doc) => doc.kind === 'Deployment') as unknown as Array<{
          spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } } };
        }>;
        expect(deployments.length).toBeGreaterThan(0);
        for (const deployment of deployments) {
          expect(deployment.spec.template.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
          expect(deployment.spec.template.spec.containers[0]!.ports?.map((port) => port.name)).toContain('ops');
        }
      }
    });

    it('alerts on the signals of docs/operations.md, in the release\'s namespace, on metrics the platform exports', () => {
      const found = rules(render(...KEYS, ...MONITORING, '--namespace', 'mcp-prod'));
      expect(found.map((rule) => rule.alert)).toEqual([
        'PlatformEventsLate',
        'PlatformEventsNotPublishing',
        'PlatformConsumerStuck',
        'PlatformEventsParked',
        'PlatformCallRecordsDropped',
        'PlatformNotFollowingChanges',
      ]);
      for (const rule of found) {
        const metrics = rule.expr.match(/platform_[a-z_]+/g) ?? [];
        expect(metrics.length).toBeGreaterThan(0);
        for (const name of metrics) expect([rule.alert, name, metricsRegistry.getSingleMetric(name) !== undefined]).toEqual([rule.alert, name, true]);
        expect(rule.expr).toContain('{namespace="mcp-prod"}');
        expect(['warning', 'critical']).toContain(rule.labels.severity);
      }
      const tuned = rules(
        render(...KEYS, ...MONITORING, '--set', 'monitoring.prometheusRule.eventsLateSeconds=300', '--set', 'monitoring.prometheusRule.consumerFailuresInARow=3'),
      );
      expect(tuned.find((rule) => rule.alert === 'PlatformEventsLate')!.expr).toMatch(/> 300$/);
      expect(tuned.find((rule) => rule.alert === 'PlatformConsumerStuck')!.expr).toMatch(/>= 3$/);
    });
  });

  describe('migrations Job', () => {
    interface Job {
      kind: string;
      metadata: { name: string; annotations: Record<string, string>; labels: Record<string, string> };
      spec: {
        backoffLimit: number;
        activeDeadlineSeconds: number;
        template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: Record<string, unknown> & { restartPolicy: string; containers: Container[] } };
      };
    }
    const JOB = ['--set', 'migrations.job.enabled=true'];
    const jobs = (docs: Manifest[]) => docs.filter((d) => d.kind === 'Job') as unknown as Job[];
    const job = (docs: Manifest[]) => {
      const found = jobs(docs);
      expect(found.map((j) => j.metadata.name)).toEqual(['platform-migrate']);
      return found[0]!;
    };
    /** A pod spec without what only serving needs or only a Job has, and without its container. */
    const podWithout = (spec: Record<string, unknown>) => Object.fromEntries(Object.entries(spec).filter(([key]) => !['containers', 'restartPolicy'].includes(key)));
    /** A container's environment sources and runtime settings, without what serving a target sets itself. */
    const runtimeOf = (c: Container & Record<string, unknown>) => ({
      image: c.image,
      envFrom: c.envFrom,
      env: c.env?.filter((e) => !['OTEL_SERVICE_NAME', 'GRPC_HOST', 'GRPC_PORT'].includes(e.name)),
      securityContext: c.securityContext,
      volumeMounts: c.volumeMounts,
    });

    it('is off by default', () => {
      expect(jobs(render(...KEYS))).toEqual([]);
      expect(jobs(render(...ALL_IN_ONE, ...KEYS))).toEqual([]);
    });

    it('runs `migrate` for the service targets as a post-install and pre-upgrade hook, and replaces a failed one next time', () => {
      const found = job(render(...KEYS, ...JOB));
      // Not pre-install: before an install nothing of the release exists (ConfigMap, Secret, ServiceAccount).
      expect(found.metadata.annotations).toEqual({
        'helm.sh/hook': 'post-install,pre-upgrade',
        'helm.sh/hook-weight': '-5',
        'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
      });
      expect(found.spec.backoffLimit).toBe(1);
      expect(found.spec.activeDeadlineSeconds).toBe(900);
      const pod = found.spec.template.spec;
      expect(pod.restartPolicy).toBe('Never');
      const c = pod.containers[0]!;
      const [command, target] = (c as unknown as { args: string[] }).args;
      expect(command).toBe('migrate');
      expect(target!.replace('--target=', '').split(',').sort()).toEqual([...SERVICE_TARGETS].sort());
      // It listens on nothing: a startup probe on /healthz would kill it after two minutes.
      expect([c.ports, c.startupProbe, c.livenessProbe, c.readinessProbe, c.lifecycle]).toEqual([undefined, undefined, undefined, undefined, undefined]);
      expect(found.spec.template.metadata.labels).toEqual({ ...RELEASE, 'app.kubernetes.io/component': 'migrate' });

      const tuned = job(render(...KEYS, ...JOB, '--set', 'migrations.job.backoffLimit=0', '--set', 'migrations.job.activeDeadlineSeconds=3600'));
      expect([tuned.spec.backoffLimit, tuned.spec.activeDeadlineSeconds]).toEqual([0, 3600]);
    });

    it("has a service pod's environment, Secret, volumes, service account and security contexts", () => {
      const volume = { name: 'private-ca', configMap: { name: 'private-ca' } };
      const mount = { name: 'private-ca', mountPath: '/etc/platform/ca', readOnly: true };
      for (const secrets of [KEYS, ['--set', 'secrets.existingSecret=mine']]) {
        const docs = render(
          ...secrets,
          ...JOB,
          '--set-json', `extraVolumes=${JSON.stringify([volume])}`,
          '--set-json', `extraVolumeMounts=${JSON.stringify([mount])}`,
          '--set-json', 'extraEnvFrom=[{"secretRef":{"name":"infra"}}]',
          '--set-json', 'extraEnv=[{"name":"NODE_EXTRA_CA_CERTS","value":"/etc/platform/ca/ca.crt"}]',
        );
        const servicePod = find(docs, 'Deployment', 'platform-identity').spec!.template!.spec as unknown as Record<string, unknown> & { containers: Container[] };
        const pod = job(docs).spec.template.spec;
        expect(podWithout(pod)).toEqual(podWithout(servicePod));
        const c = pod.containers[0]! as Container & Record<string, unknown>;
        expect(runtimeOf(c)).toEqual(runtimeOf(servicePod.containers[0]! as Container & Record<string, unknown>));
        expect(JSON.stringify(c.envFrom)).toContain(`"secretRef":{"name":"${secrets === KEYS ? 'platform-secrets' : 'mine'}"}`);
        expect(env(c, 'OTEL_SERVICE_NAME')).toBe('mcp-platform-migrate');
      }
    });

    it('migrates only the service targets this release runs, and is not rendered when it runs none', () => {
      const args = (docs: Manifest[]) => (job(docs).spec.template.spec.containers[0] as unknown as { args: string[] }).args;
      const [, target] = args(render(...KEYS, ...JOB, '--set', 'targets.catalog.enabled=false', '--set', 'targets.billing.enabled=false'));
      expect(target!.replace('--target=', '').split(',').sort()).toEqual(['agents', 'identity', 'knowledge', 'notifications']);
      const onlyGateway = SERVICE_TARGETS.flatMap((name) => ['--set', `targets.${name}.enabled=false`]);
      expect(jobs(render(...KEYS, ...JOB, ...onlyGateway))).toEqual([]);
    });

    it('all-in-one: not with embedded storage (it belongs to the one process), and `migrate` for every service with a database URL', () => {
      expect(jobs(render(...ALL_IN_ONE, ...KEYS, ...JOB))).toEqual([]);
      const external = job(render(...ALL_IN_ONE, ...KEYS, ...JOB, '--set', 'secrets.DATABASE_URL=postgres://platform@db:5432/platform'));
      expect((external.spec.template.spec.containers[0] as unknown as { args: string[] }).args).toEqual(['migrate']);
      expect(jobs(render(...ALL_IN_ONE, ...JOB, '--set', 'secrets.existingSecret=mine'))).toHaveLength(1);
    });
  });

  describe('PodDisruptionBudget', () => {
    function budgets(...args: string[]): Record<string, Manifest['spec']> {
      return Object.fromEntries(render(...KEYS, ...args).filter((d) => d.kind === 'PodDisruptionBudget').map((d) => [d.metadata.name, d.spec]));
    }

    it('keeps maxUnavailable 0 (no voluntary eviction) instead of turning it into 1', () => {
      expect(budgets('--set', 'targets.identity.podDisruptionBudget.maxUnavailable=0')['platform-identity']).toMatchObject({ maxUnavailable: 0 });
      const all = budgets('--set', 'targetDefaults.podDisruptionBudget.maxUnavailable=0');
      expect(Object.values(all).map((spec) => spec!.maxUnavailable)).toEqual(Array(7).fill(0));
    });

    it('defaults to maxUnavailable 1, and minAvailable wins when given', () => {
      expect(budgets()['platform-catalog']).toMatchObject({ maxUnavailable: 1 });
      const min = budgets('--set', 'targets.catalog.podDisruptionBudget.minAvailable=1')['platform-catalog'];
      expect(min).toMatchObject({ minAvailable: 1 });
      expect(min).not.toHaveProperty('maxUnavailable');
    });
  });
});
