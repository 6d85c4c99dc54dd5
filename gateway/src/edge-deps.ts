import type { Cache, EventBus, Logger, MaintenanceWatcher, PublishPolicy, RateLimiter, Secrets, ServiceClients } from '@platform/runtime';
import type { McpSettings } from './mcp/data-plane';

/** What the edge's routes and pages work with. */
export interface EdgeDeps {
  clients: ServiceClients;
  cache: Cache;
  /** The event bus: the /mcp data plane publishes call records here (absent where routes are built without a platform). */
  bus?: EventBus;
  /** The installation's key ring: the /mcp data plane seals session ids with it. */
  secrets?: Secrets;
  rateLimiter: RateLimiter;
  logger: Logger;
  /** This process's view of maintenance mode (absent where routes are built without a platform). */
  maintenance?: MaintenanceWatcher;
  settings: EdgeSettings;
}

export interface EdgeSettings {
  /** The public address (APP_URL), without a trailing slash. */
  appUrl: string;
  instanceName: string;
  sessionTtlSeconds: number;
  apiKeyRateLimitPerMinute: number;
  /** How long an edge may remember an authentication while nothing changed (0: ask identity every time). */
  authCacheSeconds: number;
  /** How long the edge remembers the identity-token keys (signing, /.well-known/jwks.json); default 60. */
  identityKeysCacheSeconds?: number;
  /** The platform's default MCP publish policy (MCP_PUBLISH_POLICY); `approval_required` when absent. */
  defaultPublishPolicy?: PublishPolicy;
  /** The /mcp/{slug} data plane (defaults when absent). */
  mcp?: McpSettings;
}

/** Cookies are Secure (and `__Host-` prefixed) when the installation is served over https. */
export function secureCookies(settings: EdgeSettings): boolean {
  return settings.appUrl.startsWith('https:');
}
