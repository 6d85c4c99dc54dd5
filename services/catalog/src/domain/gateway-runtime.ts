import type { GatewayRuntime, ResolveGatewayRequest, RuntimeServer } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { AppError } from '@platform/runtime';
import type { CatalogDeps } from '../deps';
import { listRuntimeServers } from '../store/gateway-runtime-store';
import { findGatewayBySlug } from '../store/gateways-store';
import { toGateway } from '../store/mappers';
import { assignExposedNames } from './gateway-names';
import { isGatewaySlug } from './gateway-rules';
import { teamAudienceOf } from './team-audience';
import { upstreamHeadersOf } from './upstream-headers';

/** The colliding names a resolve logs at most, and the characters of each. */
const LOGGED_COLLISIONS = 10;
const LOGGED_NAME_CHARS = 200;

/**
 * What the /mcp/{slug} data plane needs to serve a gateway: the gateway (enabled or not: access is the data plane's
 * check) and, in gateway order, its servers in the team's catalog now, each with its unsealed static headers and
 * its exposed capabilities. A name that collides at run time (a capability approved after the gateway was
 * configured) stays with the capability approved first (ties: the earlier server); the other is left out, so an
 * approval never takes a name from what a gateway already exposes. Unknown slug: NOT_FOUND.
 */
export async function resolveGateway(deps: CatalogDeps, request: ResolveGatewayRequest): Promise<GatewayRuntime> {
  const gateway = isGatewaySlug(request.slug) ? await findGatewayBySlug(deps.db, request.slug) : null;
  if (!gateway) throw AppError.notFound('Gateway');
  const audience = await teamAudienceOf(deps, gateway.team_id);
  const rows = await listRuntimeServers(deps.db, gateway.id, audience);
  const { kept, collisions } = assignExposedNames(rows, (row) => row.capabilities, (capability) => Date.parse(capability.approvedAt));
  if (collisions.length > 0) {
    // Names only (never definitions or headers): why a capability approved later is missing from the gateway. Names
    // come from upstreams, of any length: each is cut, so a resolve cannot write lines of megabytes.
    const hidden = collisions.slice(0, LOGGED_COLLISIONS).map((name) => name.slice(0, LOGGED_NAME_CHARS));
    deps.logger.info({ gateway: gateway.slug, hidden, count: collisions.length }, 'gateway leaves out capabilities whose names another server holds');
  }
  return {
    gateway: toGateway(gateway),
    servers: rows.map((row): RuntimeServer => ({
      id: row.id,
      slug: row.slug,
      name: row.name,
      teamId: row.team_id,
      prefix: row.prefix,
      url: row.url,
      transport: row.transport,
      timeoutSeconds: row.timeout_seconds,
      headers: upstreamHeadersOf(deps, row),
      sendIdentity: row.send_identity,
      capturePayloads: row.capture_payloads,
      capabilities: (kept.get(row) ?? []).map(({ capability, exposedName }) => ({
        kind: capability.kind,
        name: capability.name,
        exposedName,
        definitionJson: JSON.stringify(capability.definition),
        fingerprint: capability.fingerprint,
        approvedAt: new Date(capability.approvedAt).toISOString(),
      })),
    })),
  };
}

