import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { KAFKA_SASL_MECHANISMS } from '../bus/kafka-security';
import { IDENTITY_KEYS_CACHE_MAX_SECONDS } from '../crypto/identity-key-timing';
import { AllowedNetworksError, parseAllowedNetworks } from '../net/allowed-networks';
import { PUBLISH_POLICIES } from '../service/publish-policy';

/** Every service the platform is made of, in the order the modules list them. */
export const SERVICE_NAMES = ['identity', 'catalog', 'agents', 'knowledge', 'billing', 'notifications'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

const emptyAsUndefined = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const optionalString = z.preprocess(emptyAsUndefined, z.string().optional());
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();
/** `true`/`false`, `1`/`0` or `yes`/`no`, in any letter case (OpenTelemetry reads its boolean variables so). */
const bool = z.preprocess(
  (value) => emptyAsUndefined(typeof value === 'string' ? value.trim().toLowerCase() : value),
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => v === 'true' || v === '1' || v === 'yes'),
);

/** A duration: `12h`, `30m`, `45s`, `7d`, or a number of seconds. Parsed to seconds. */
const durationSeconds = z.preprocess(
  emptyAsUndefined,
  z
    .string()
    .regex(/^\d+\s*[smhd]?$/, 'must be a duration such as 12h, 30m, 45s or a number of seconds')
    .transform((value) => {
      const match = /^(\d+)\s*([smhd]?)$/.exec(value)!;
      const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
      return Number(match[1]) * unit;
    })
    .refine((seconds) => seconds > 0, 'must be longer than zero')
    .optional(),
);

/**
 * A value checked at start by the parser that will read it (so a typo stops the process, naming the variable,
 * rather than failing each request that reads it later). `parse` throws with a message saying what is wrong.
 */
const checkedBy = <T extends string | undefined>(parse: (value: string) => unknown, schema: z.ZodType<T>) =>
  z.preprocess(
    emptyAsUndefined,
    schema.superRefine((value, context) => {
      if (value === undefined) return;
      try {
        parse(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
      }
    }),
  );

/** TRUST_PROXY as the edge reads it (express's `trust proxy`): true, false, a hop count, or addresses and subnets. */
function checkTrustProxy(value: string): void {
  const trimmed = value.trim();
  if (trimmed === 'true' || trimmed === 'false' || /^\d+$/.test(trimmed)) return;
  try {
    proxyaddr.compile(trimmed.split(',').map((entry) => entry.trim()));
  } catch (error) {
    throw new Error(
      `must be true, false, a hop count, or a comma list of addresses, subnets (10.0.0.0/8) and loopback, linklocal or uniquelocal (${(error as Error).message})`,
      { cause: error },
    );
  }
}

/** ALLOWED_INTERNAL_NETWORKS as the address guard reads it; its error names the bad entry. */
function checkAllowedNetworks(value: string): void {
  try {
    parseAllowedNetworks(value);
  } catch (error) {
    if (error instanceof AllowedNetworksError) throw new Error(error.message.replace(/^ALLOWED_INTERNAL_NETWORKS /, ''), { cause: error });
    throw error;
  }
}

const url = (protocols: string[]) =>
  z.string().refine((value) => {
    try {
      return protocols.includes(new URL(value).protocol);
    } catch {
      return false;
    }
  }, `must be a URL with scheme ${protocols.join(' or ')}`);

/**
 * The environment the platform reads, validated once at start. Each entry is documented in README.md;
 * keep the two in step.
 */
export const environmentSchema = z.object({
  PORT: port.default(8080),
  /** The ops listener (/healthz, /readyz, /metrics) of every process, apart from the public PORT. */
  OPS_PORT: port.default(8081),
  APP_URL: z
    .preprocess(emptyAsUndefined, url(['http:', 'https:']).default('http://localhost:8080'))
    .transform((value) => value.replace(/\/+$/, '')),
  INSTANCE_NAME: z.preprocess(emptyAsUndefined, z.string().max(100).default('MCP Platform')),
  GRPC_HOST: optionalString,
  GRPC_PORT: port.default(50051),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default('./data')),
  DATABASE_URL: z.preprocess(emptyAsUndefined, url(['postgres:', 'postgresql:']).optional()),
  DATABASE_POOL_MAX: positiveInt.default(10),
  REDIS_URL: z.preprocess(emptyAsUndefined, url(['redis:', 'rediss:']).optional()),
  REDIS_KEY_PREFIX: z.preprocess(emptyAsUndefined, z.string().default('platform:')),
  KAFKA_BROKERS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .optional()
      .transform((v) => (v === undefined ? undefined : v.split(',').map((b) => b.trim()).filter(Boolean))),
  ),
  KAFKA_CLIENT_ID: z.preprocess(emptyAsUndefined, z.string().default('mcp-platform')),
  KAFKA_TOPIC_PREFIX: z.preprocess(emptyAsUndefined, z.string().default('')),
  /** TLS to the brokers, certificates verified (always). */
  KAFKA_SSL: bool,
  /** PEM file of the CA(s) the brokers' certificates are checked against instead of the system store; read at start (load.ts). */
  KAFKA_SSL_CA_FILE: optionalString,
  /** PEM files of this client's certificate (chain) and unencrypted private key, for brokers that authenticate clients by TLS; read at start. */
  KAFKA_SSL_CERT_FILE: optionalString,
  KAFKA_SSL_KEY_FILE: optionalString,
  /** SASL mechanism (any letter case); unset: no SASL. KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD go with it. */
  KAFKA_SASL_MECHANISM: z.preprocess(
    (value) => emptyAsUndefined(typeof value === 'string' ? value.trim().toLowerCase() : value),
    z.enum(KAFKA_SASL_MECHANISMS).optional(),
  ),
  KAFKA_SASL_USERNAME: optionalString,
  /** A secret, like DATABASE_URL: never logged, never in an error message. */
  KAFKA_SASL_PASSWORD: optionalString,
  /** Lets SASL PLAIN run without KAFKA_SSL (the password in clear): only where the network itself is encrypted. */
  KAFKA_SASL_ALLOW_PLAINTEXT: bool,
  ENCRYPTION_KEY: optionalString,
  API_KEY_PEPPER: optionalString,
  LOG_LEVEL: z.preprocess(
    emptyAsUndefined,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
  BODY_LIMIT_BYTES: positiveInt.default(1024 * 1024),
  SHUTDOWN_TIMEOUT_SECONDS: positiveInt.default(25),
  GRPC_DEADLINE_MS: positiveInt.default(10_000),
  OUTBOX_POLL_MS: positiveInt.default(1_000),
  TRUST_PROXY: checkedBy(checkTrustProxy, z.string().optional()),
  SESSION_TTL: durationSeconds.transform((v) => v ?? 12 * 3600),
  /** How many days browser sessions are kept after they expired or were ended; older ones are deleted hourly. 0 keeps them. */
  SESSION_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  API_KEY_RATE_LIMIT_PER_MINUTE: positiveInt.default(300),
  AUTH_CACHE_SECONDS: z.coerce.number().int().min(0).max(60).default(10),
  BOOTSTRAP_ADMIN_EMAIL: optionalString,
  BOOTSTRAP_ADMIN_PASSWORD: optionalString,
  MAINTENANCE_REFRESH_SECONDS: positiveInt.default(5),
  /** CIDRs the address guard admits besides public unicast addresses (comma-separated). */
  ALLOWED_INTERNAL_NETWORKS: checkedBy(checkAllowedNetworks, z.string().default('')),
  /** The platform's default MCP publish policy; a team's override (op 13) wins. */
  MCP_PUBLISH_POLICY: z.preprocess(emptyAsUndefined, z.enum(PUBLISH_POLICIES).default('approval_required')),
  /** How often each enabled MCP server is health-checked (initialize + ping); 0 turns the checks off. */
  MCP_HEALTH_CHECK_SECONDS: z.coerce.number().int().min(0).default(60),
  /** How often each enabled MCP server's capabilities are re-discovered; 0 turns scheduled discovery off. */
  MCP_REFRESH_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** How many days call records (§2.9) are kept; older ones are deleted hourly. 0 keeps them for ever. */
  MCP_CALL_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(30),
  /** Browser origins, besides APP_URL's, allowed to call /mcp/{slug} (comma-separated scheme://host[:port]). */
  MCP_ALLOWED_ORIGINS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .default('')
      .transform((v) => v.split(',').map((o) => o.trim()).filter(Boolean)),
  ),
  /** How long an MCP client session id stays valid. */
  MCP_SESSION_MAX_AGE_SECONDS: positiveInt.default(24 * 3600),
  /** Largest JSON-RPC message the /mcp data plane accepts from a client or an upstream. */
  MCP_MAX_MESSAGE_BYTES: positiveInt.default(4 * 1024 * 1024),
  /**
   * Longest a client request through /mcp/{slug} may take in all, however often its upstream reports progress (MCP:
   * a maximum timeout regardless of progress notifications); the server's own timeout still bounds each silence.
   */
  MCP_MAX_EXCHANGE_SECONDS: positiveInt.max(7 * 24 * 3600).default(3600),
  /** Most requests (a batch counting once) one person may have in flight through /mcp/{slug} on one replica (then 429). */
  MCP_MAX_REQUESTS_PER_PERSON: positiveInt.default(256),
  /** Most GET streams one person may hold open on /mcp/{slug} on one replica (then 429). */
  MCP_MAX_GET_STREAMS_PER_PERSON: positiveInt.default(32),
  /** Age in days after which the identity-token signing key is replaced (old public keys stay published a day past the switch). */
  IDENTITY_TOKEN_KEY_ROTATION_DAYS: z.coerce.number().positive().max(365).default(30),
  /** How long an edge remembers the identity-token keys (signing and /.well-known/jwks.json). */
  IDENTITY_KEYS_CACHE_SECONDS: z.coerce.number().int().min(0).max(IDENTITY_KEYS_CACHE_MAX_SECONDS).default(60),
  /** PEM file of extra certificate authorities trusted for outbound https (private CAs; tests). */
  OUTBOUND_EXTRA_CA_FILE: optionalString,
  OTEL_SDK_DISABLED: bool,
  /** Hold every /v1 answer to its documented status and schema, failing a deviating one with 500 (tests; costs CPU). */
  CHECK_RESPONSES: bool,
  IDENTITY_SERVICE_ADDR: optionalString,
  CATALOG_SERVICE_ADDR: optionalString,
  AGENTS_SERVICE_ADDR: optionalString,
  KNOWLEDGE_SERVICE_ADDR: optionalString,
  BILLING_SERVICE_ADDR: optionalString,
  NOTIFICATIONS_SERVICE_ADDR: optionalString,
});

export type Environment = z.infer<typeof environmentSchema>;
