import type { RefreshTokenRequest, TokenResponse } from '@platform/proto/gen/platform/identity/v1/oauth';
import { authChangeCommitted, sameResource, StatementBatcher, type Transaction } from '@platform/runtime';
import type { IdentityDeps } from '../../deps';
import {
  claimAndRotate,
  claimRefreshToken,
  findRefreshToken,
  findRetiredRefreshToken,
  insertRotatedPair,
  revokeConnectionAndTokens,
  type PresentedRefreshRow,
  type RefreshContextRow,
  type Rotation,
} from '../../store/oauth-grants-store';
import { gatewayParent, oauthAuditEntry, personActor, viaClient, writeOAuthAudit, type OAuthAuditEntry } from './audit';
import { OAuthRefusal, oauthError } from './errors';
import { REFRESH_REPLAY_GRACE_SECONDS } from './limits';
import { newTokenPair, REFRESH_TOKEN_PREFIX, tokenResponse } from './token-pair';
import { empty } from './tokens';

const INVALID = 'The refresh token is invalid, expired or revoked.';

/**
 * The refresh_token grant with rotation (§5.5, §3, OAuth 2.1 §4.3.1, RFC 9700 §4.14.2):
 * - a live, unrotated token is claimed atomically and replaced by a new pair of the next generation;
 * - a token rotated at most 30 s ago that is the immediate predecessor of the newest generation gets another
 *   pair (a client refreshing twice at once sees both succeed);
 * - a retired token presented later, or an older generation, revokes the whole connection (replay detected);
 * - unknown, expired, revoked, another client's, a revoked connection or an inactive person: invalid_grant,
 *   with nothing claimed (the transaction rolls back).
 *
 * The common case (a live token, used once) takes no transaction: one statement claims, rotates and records the
 * audit entry atomically, conditioned on the token's context (connection, client, gateway, person) — remembered
 * from when this process issued the token, else read first — and serves every such grant that arrives meanwhile
 * (rotationBatcher). Anything else — or a claim lost to a concurrent use — goes the careful way: one transaction
 * that claims or finds out why not (grace, replay, refusal).
 */
export async function refreshToken(deps: IdentityDeps, request: RefreshTokenRequest): Promise<TokenResponse> {
  if (!request.refreshToken) return { ...empty, error: oauthError('invalid_request', 'refresh_token is required.') };
  if (!request.clientId) return { ...empty, error: oauthError('invalid_request', 'client_id is required.') };
  if (!request.refreshToken.startsWith(REFRESH_TOKEN_PREFIX)) return { ...empty, error: oauthError('invalid_grant', INVALID) };
  const digest = deps.secrets.digester.digest(request.refreshToken);
  const rotated = await rotateLiveToken(deps, digest, request);
  if (rotated) return rotated;
  const outcome = await refreshCarefully(deps, digest, request);
  // Only a detected replay changes who may authenticate (it revokes the connection): edges must check again.
  // A rotation only adds tokens, so the grant's RPC is exempt from the blanket invalidation (grpc/handlers.ts).
  if (outcome.revoked) await authChangeCommitted(deps);
  return outcome.response;
}

/**
 * What this process knows of the refresh tokens it issued and has not seen used: their context, as the fast
 * path would read it. Only a hint: the rotation statement checks all of it again in the database, so a stale or
 * missing entry (the token was used through another replica, the person was renamed or suspended) costs a read or
 * the careful path, never a wrong answer. Bounded; forgets the oldest first. Holds digests, never tokens.
 */
const issuedContexts = new WeakMap<IdentityDeps, Map<string, PresentedRefreshRow>>();
const ISSUED_CONTEXTS_LIMIT = 20_000;

function issuedContextsOf(deps: IdentityDeps): Map<string, PresentedRefreshRow> {
  let contexts = issuedContexts.get(deps);
  if (!contexts) issuedContexts.set(deps, (contexts = new Map()));
  return contexts;
}

/** The fast path: null when the token is not live and usable as presented, or when the claim was lost. */
async function rotateLiveToken(deps: IdentityDeps, digest: string, request: RefreshTokenRequest): Promise<TokenResponse | null> {
  const contexts = issuedContextsOf(deps);
  const remembered = contexts.get(digest);
  if (remembered) contexts.delete(digest);
  const token = remembered ?? (await findRefreshToken(deps.db, digest));
  if (!token?.claimable || refusal(token, request)) return null;
  const generation = token.generation + 1;
  const pair = newTokenPair(deps, generation);
  const audit = oauthAuditEntry(tokenIssueEntry(token, generation, request));
  if (!(await rotationBatcher(deps).submit({ digest, expected: token, pair: pair.stored, audit }))) return null;
  if (contexts.size >= ISSUED_CONTEXTS_LIMIT) contexts.delete(contexts.keys().next().value!);
  contexts.set(pair.stored.refreshDigest, { ...token, generation, refresh_generation: generation });
  return tokenResponse(pair.values, token);
}

/** Large enough that one statement serves a busy moment's grants; the statement's cost grows with its rows. */
const ROTATION_BATCH_MAX = 64;
/** At most half the pool's connections (and four), so other queries still find one while batches run. */
function rotationBatchesAtOnce(deps: IdentityDeps): number {
  const { storage } = deps.config;
  return storage.kind === 'postgres' ? Math.max(1, Math.min(4, Math.floor(storage.poolMax / 2))) : 1;
}
const rotationBatchers = new WeakMap<IdentityDeps, StatementBatcher<Rotation, boolean>>();

/**
 * Rotations gathered into one statement per batch (a group commit): under load one statement, round trip and
 * commit serve many grants. One connection's rotations never share a batch (the statement touches each row once).
 * A batch that fails (a deadlock with a concurrent rotation of the same connection, a lost connection) wrote
 * nothing; each of its grants then goes the careful way, which fails on its own if the database does.
 */
function rotationBatcher(deps: IdentityDeps): StatementBatcher<Rotation, boolean> {
  let batcher = rotationBatchers.get(deps);
  if (!batcher) {
    const rotate = async (rotations: Rotation[]): Promise<boolean[]> => {
      try {
        return await claimAndRotate(deps.db, rotations);
      } catch (error) {
        deps.logger.warn({ err: error, rotations: rotations.length }, 'a batch of refresh token rotations failed; each goes the careful way');
        return rotations.map(() => false);
      }
    };
    batcher = new StatementBatcher(rotate, { maxItems: ROTATION_BATCH_MAX, concurrency: rotationBatchesAtOnce(deps), key: (rotation) => rotation.expected.connection_id });
    rotationBatchers.set(deps, batcher);
  }
  return batcher;
}

async function refreshCarefully(deps: IdentityDeps, digest: string, request: RefreshTokenRequest): Promise<{ response: TokenResponse; revoked: boolean }> {
  try {
    return await deps.db.transaction(async (tx) => {
      const claimed = await claimRefreshToken(tx, digest);
      if (claimed) {
        checkUsable(claimed, request);
        return { response: await issuePair(deps, tx, claimed, claimed.generation + 1, request), revoked: false };
      }
      const retired = await findRetiredRefreshToken(tx, digest, REFRESH_REPLAY_GRACE_SECONDS);
      if (!retired || !retired.rotated || retired.connection_revoked) {
        return { response: { ...empty, error: oauthError('invalid_grant', INVALID) }, revoked: false };
      }
      checkUsable(retired, request);
      if (retired.in_grace && retired.generation === retired.refresh_generation - 1) {
        return { response: await issuePair(deps, tx, retired, retired.refresh_generation, request), revoked: false };
      }
      const revoked = await revokeConnectionAndTokens(tx, retired.connection_id);
      if (revoked) {
        await writeOAuthAudit(tx, {
          action: 'oauth.revoke',
          actor: personActor({ id: retired.person_id, email: retired.email, displayName: retired.display_name }),
          via: viaClient(retired.client_name, retired.client_id),
          requestId: request.requestId,
          clientIp: request.clientIp,
          target: { type: 'oauth_connection', id: retired.connection_id, label: retired.client_name || retired.client_id },
          parent: gatewayParent(retired.gateway_id, retired.gateway_slug),
          metadata: { connectionId: retired.connection_id, clientId: retired.client_id, kind: 'refresh_token', reason: 'refresh_token_reuse' },
        });
      }
      const response = { ...empty, error: oauthError('invalid_grant', 'The refresh token was already used; the connection has been revoked.') };
      return { response, revoked: revoked !== null };
    });
  } catch (error) {
    if (error instanceof OAuthRefusal) return { response: { ...empty, error: error.oauth }, revoked: false };
    throw error;
  }
}

/** Bound to its client, to its resource (RFC 8707 §2.2) and to an active person on a live connection. */
function refusal(row: RefreshContextRow, request: RefreshTokenRequest): OAuthRefusal | null {
  if (row.client_id !== request.clientId) return new OAuthRefusal('invalid_grant', 'The refresh token was issued to another client.');
  if (row.connection_revoked || row.person_status !== 'active') return new OAuthRefusal('invalid_grant', INVALID);
  // In the canonical form the authorize request was compared in (RFC 8707 §2), as at the code exchange.
  if (request.resource && !sameResource(request.resource, row.resource)) return new OAuthRefusal('invalid_target', 'resource does not match the grant.');
  return null;
}

function checkUsable(row: RefreshContextRow, request: RefreshTokenRequest): void {
  const refused = refusal(row, request);
  if (refused) throw refused;
}

async function issuePair(deps: IdentityDeps, tx: Transaction, row: RefreshContextRow, generation: number, request: RefreshTokenRequest): Promise<TokenResponse> {
  const pair = newTokenPair(deps, generation);
  await insertRotatedPair(tx, row.connection_id, pair.stored);
  await writeOAuthAudit(tx, tokenIssueEntry(row, generation, request));
  return tokenResponse(pair.values, row);
}

/** `oauth.token_issue` for a refresh grant: who, through which client, on which connection and gateway. Never a token. */
function tokenIssueEntry(row: RefreshContextRow, generation: number, request: RefreshTokenRequest): OAuthAuditEntry {
  return {
    action: 'oauth.token_issue',
    actor: personActor({ id: row.person_id, email: row.email, displayName: row.display_name }),
    via: viaClient(row.client_name, row.client_id),
    requestId: request.requestId,
    clientIp: request.clientIp,
    target: { type: 'oauth_connection', id: row.connection_id, label: row.client_name || row.client_id },
    parent: gatewayParent(row.gateway_id, row.gateway_slug),
    metadata: { clientId: row.client_id, gatewayId: row.gateway_id, connectionId: row.connection_id, grant: 'refresh_token', generation },
  };
}
