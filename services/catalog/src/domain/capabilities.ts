import type { ListCapabilitiesRequest, ListCapabilitiesResponse, RefreshMcpServerRequest, RefreshMcpServerResponse } from '@platform/proto/gen/platform/catalog/v1/catalog';
import { ActorKind, type PageRequest, type RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import { AppError, auditContext, firstAbortOf, writeAuditEvent, type Transaction } from '@platform/runtime';
import { SCHEMA, type CatalogDeps } from '../deps';
import { listServerCapabilities, lockPresentCapabilities, markCapabilitiesGone, pruneGoneUnapprovedCapabilities, recordRefreshOutcome, upsertCapabilities, type CapabilityRow } from '../store/capabilities-store';
import type { McpServerRow } from '../store/mcp-servers-mappers';
import { findTeamMcpServer } from '../store/mcp-servers-store';
import { holdsRefreshLease } from '../store/refresh-store';
import { sameUpstreamConnection } from '../store/upstream-connection';
import { capabilityPage } from './capability-pages';
import { discoverCapabilities, DiscoveryError, type DiscoveredCapability } from './discovery';
import { DiscoverySlotWaitEnded } from './discovery-slots';
import { UUID } from './gateway-rules';
import { writableTeam } from './publish-policy';
import { announceServerExposureChange, refreshChangesExposure } from './refresh-exposure';
import { RefreshLeaseTakenOver, type RefreshLease } from './refresh-leases';
import { upstreamErrorForLog } from './upstream-error-log';
import { upstreamTargetOf } from './upstream-exchange';

const NOT_FOUND = () => AppError.notFound('MCP server');

async function teamServer(deps: CatalogDeps, teamId: string, serverId: string): Promise<McpServerRow> {
  const row = UUID.test(teamId) && UUID.test(serverId) ? await findTeamMcpServer(deps.db, teamId, serverId.toLowerCase()) : null;
  if (!row) throw NOT_FOUND();
  return row;
}

/** How to reach the server, with its static headers unsealed for the discovery connection. */
async function auditRefresh(tx: Transaction, context: RequestContext | undefined, row: McpServerRow, metadata: Record<string, unknown>) {
  await writeAuditEvent(tx, SCHEMA, {
    ...auditContext(context),
    teamId: row.team_id,
    action: 'mcp_server.refresh',
    target: { type: 'mcp_server', id: row.id, label: row.slug },
    metadata,
  });
}

/**
 * Counts for the audit entry: how many of each kind are present now, and what this refresh changed. `returned`
 * counts gone capabilities offered again (whatever their definition: a changed one shows as changed until it is
 * approved); `redefined` only present ones whose definition changed. Each capability counts once.
 */
function refreshCounts(found: readonly DiscoveredCapability[], before: readonly CapabilityRow[], goneIds: readonly string[]) {
  const previous = new Map(before.map((row) => [`${row.kind}\u0000${row.name}`, row]));
  const count = (kind: string) => found.filter((item) => item.kind === kind).length;
  let added = 0;
  let returned = 0;
  let redefined = 0;
  for (const item of found) {
    const old = previous.get(`${item.kind}\u0000${item.name}`);
    if (!old) added++;
    else if (old.gone_at !== null) returned++;
    else if (old.fingerprint !== item.fingerprint) redefined++;
  }
  return {
    tools: count('tool'),
    resources: count('resource'),
    resourceTemplates: count('resource_template'),
    prompts: count('prompt'),
    added,
    returned,
    redefined,
    gone: goneIds.length,
  };
}

/**
 * Whether the platform itself asks (the scheduler, or the data plane after an upstream's `list_changed`): keeping
 * the stored list true to the upstream is not a change the team makes, so it goes on while the team is archived.
 */
function askedBySystem(context: RequestContext | undefined): boolean {
  return context?.actor?.kind === ActorKind.ACTOR_KIND_SYSTEM;
}

/**
 * Locks the server row for storing what a discovery of `probed` learnt (so two refreshes of one server apply one
 * after the other) and answers it; null when its URL, transport or headers changed since `probed` was read, since
 * what was found over the old connection says nothing about the new one. A server deleted meanwhile is 404.
 */
async function lockedAsProbed(tx: Transaction, probed: McpServerRow): Promise<McpServerRow | null> {
  const locked = await findTeamMcpServer(tx, probed.team_id, probed.id, true);
  if (!locked) throw NOT_FOUND();
  return sameUpstreamConnection(locked, probed) ? locked : null;
}

/** The failure as recorded on the server and answered: its class, and why the platform refused the answer if it did. */
function refreshErrorMessage(error: DiscoveryError): string {
  return error.refusal
    ? `The MCP server's answer was refused (${error.errorClass}): ${error.refusal}`
    : `The MCP server could not be reached: ${error.errorClass}`;
}

/**
 * Gone capabilities never approved that a server keeps, the most recently gone (docs/catalog.md, Capabilities): past
 * this, a refresh deletes the oldest. Approved ones are always kept: their approval is a decision.
 */
export const MAX_GONE_UNAPPROVED_PER_SERVER = 1_000;

/** Discovery rounds one lease holder runs back to back for refreshes asked meanwhile, before it lets go. */
const MAX_ROUNDS = 3;

/** How long one discovery may take in all (it makes several requests, each within the server's timeout). */
const discoveryBudgetSeconds = (server: McpServerRow) => Math.max(60, server.timeout_seconds * 10);

/**
 * Discovers the server's capabilities upstream and stores them: new ones unapproved, seen ones with their current
 * definition and fingerprint (approvals kept, so a change shows), missing ones gone. The outcome is recorded on the
 * server (refreshed_at, or last_refresh_error with the failure's class and any refusal's reason) and audited `mcp_server.refresh` with counts;
 * the edges of the gateways naming the server are told when what it exposes changed (refresh-exposure.ts). An
 * unreachable or misbehaving upstream is 503 `unavailable`. A team's
 * refresh (a person, API key or service account) is refused while the team is archived (409 `team_archived`); the
 * platform's own (scheduler, data plane) is not. The answer is the first page of the present capabilities, of
 * `page.pageSize`; its cursor continues with listCapabilities (docs/catalog.md, What a refresh answers).
 *
 * One discovery of a server runs at a time across replicas (a lease on the row, held by a refresh that runs:
 * refresh-leases.ts). A refresh asked for while another runs is coalesced: the running one discovers once more when
 * its round ends (so a change announced during a round is not missed), and the caller gets the stored list's first
 * page at once, marked `coalesced`; so is a refresh whose lease another took over while it discovered (nothing is
 * down: that one discovers the server). A round whose server's connection changed meanwhile
 * (URL, transport or headers) stores nothing and is followed by one over the new connection. At most MAX_ROUNDS rounds; when the
 * last one was discarded, the caller gets the stored list's first page. `signal` stops the discovery (shutdown).
 */
export async function refreshMcpServer(deps: CatalogDeps, request: RefreshMcpServerRequest, signal?: AbortSignal): Promise<RefreshMcpServerResponse> {
  if (!askedBySystem(request.context)) await writableTeam(deps, request.teamId);
  const server = await teamServer(deps, request.teamId, request.serverId);
  // A refresh answers the first page: a cursor has nothing to continue here.
  const answerPage = { pageSize: request.page?.pageSize ?? 0, cursor: '' };
  const storedPage = async (coalesced: boolean) => ({ ...(await capabilityPage(deps.db, server.id, false, answerPage)), coalesced });
  const lease = deps.refreshLeases.enter(server.id);
  if (!lease) return storedPage(true);
  /** Merged into another refresh: one held the lease already, or took it over while this one discovered. */
  let merged: boolean;
  /** Merged because another refresh took the lease over while this one discovered. */
  let superseded = false;
  let answer: ListCapabilitiesResponse | null = null;
  try {
    merged = !(await lease.take(deps.db));
    if (!merged) answer = await discoverUnderLease(deps, request, server, lease, answerPage, signal);
  } catch (error) {
    if (!(error instanceof RefreshLeaseTakenOver)) throw error;
    merged = true;
    superseded = true;
  } finally {
    // Before reading the stored list: a refresh asked for from now on runs (or merges into another replica's), where
    // one merged here meanwhile would be told of a repeat that never comes.
    lease.leave();
  }
  if (superseded) {
    // A renewal finds no lease of its own on a deleted server too: that is 404, not another refresh.
    await teamServer(deps, request.teamId, request.serverId);
    deps.logger.info({ serverId: server.id }, 'refresh superseded: another refresh took its lease over and discovers the server');
  }
  if (merged) return storedPage(true);
  return answer ? { ...answer, coalesced: false } : storedPage(false);
}

/**
 * The rounds of a refresh that holds the server's lease, each with the lease kept (renewed) while it runs; null when
 * the last one was discarded. The lease is let go at the end, or on failure.
 */
async function discoverUnderLease(
  deps: CatalogDeps,
  request: RefreshMcpServerRequest,
  server: McpServerRow,
  lease: RefreshLease,
  answerPage: PageRequest,
  signal: AbortSignal | undefined,
): Promise<ListCapabilitiesResponse | null> {
  let context = request.context;
  /** This caller's answer once a round of its own was stored: what a later round, asked for by others, cannot undo. */
  let answered: ListCapabilitiesResponse | null = null;
  try {
    for (let round = 1; ; round++) {
      const current = round === 1 ? server : await teamServer(deps, request.teamId, request.serverId);
      const result = await keptRound(deps, lease, signal, (stop) => discoverAndStore(deps, current, { context, answerPage, leaseToken: lease.token }, stop));
      const discarded = result === null;
      if (!(await lease.finishRound(deps.db, round < MAX_ROUNDS, discarded))) return result;
      // A repeat asked for by other callers is the system's doing; a round redone over the new connection is still this caller's.
      if (!discarded) {
        context = undefined;
        answered = result;
      }
    }
  } catch (error) {
    // Out of this replica's running refreshes first, so one asked for from now on takes the lease over and runs; the
    // letting go is not awaited (a database that does not answer would hold the caller, and every refresh of the
    // server merged meanwhile, for the read timeout) and, by its token, changes nothing once another took over.
    lease.leave();
    void lease.release(deps.db, deps.logger);
    // The caller's own discovery succeeded and was stored; the failed repeat is recorded on the server as the system's.
    if (answered !== null) return answered;
    throw error;
  }
}

/**
 * Runs a round with the lease renewed meanwhile; a lease that could not be renewed (RefreshLeaseLost) or that another
 * refresh took over (RefreshLeaseTakenOver) stops it.
 */
async function keptRound<T>(deps: CatalogDeps, lease: RefreshLease, signal: AbortSignal | undefined, round: (stop: AbortSignal) => Promise<T>): Promise<T> {
  const kept = lease.keep(deps.db);
  const stop = signal ? firstAbortOf([signal, kept.signal]) : null;
  try {
    return await round(stop?.signal ?? kept.signal);
  } catch (error) {
    // The round reports a stop as "stopped": say why.
    if (kept.signal.aborted) throw kept.signal.reason;
    throw error;
  } finally {
    stop?.release();
    kept.stop();
  }
}

/**
 * One discovery round over the connection `server` names, and its outcome stored. Null when the server's URL,
 * transport or headers changed while it ran: then nothing is stored, audited or announced.
 */
async function discoverAndStore(
  deps: CatalogDeps,
  server: McpServerRow,
  { context, answerPage, leaseToken }: { context: RequestContext | undefined; answerPage: PageRequest; leaseToken: string },
  signal: AbortSignal | undefined,
): Promise<ListCapabilitiesResponse | null> {
  /**
   * The server's row locked as probed, while this refresh still holds the lease: a fence. A round that lost its lease
   * (its store's connection stalled past the lease, and another replica discovered meanwhile) must not store over a
   * newer discovery; once the row is locked here, nobody can take the lease over until this transaction ends.
   */
  const lockedUnderLease = async (tx: Transaction) => {
    const locked = await lockedAsProbed(tx, server);
    if (locked && !(await holdsRefreshLease(tx, server.id, leaseToken))) throw new RefreshLeaseTakenOver();
    return locked;
  };
  const deadline = AbortSignal.timeout(discoveryBudgetSeconds(server) * 1000);
  // Not AbortSignal.any: the caller's signal (the scheduler's) lives as long as the process (runtime first-abort.ts).
  const following = signal ? firstAbortOf([signal, deadline]) : undefined;
  const stop = following?.signal ?? deadline;
  let found: DiscoveredCapability[];
  try {
    // The wait for a slot counts against the budget: the caller's answer is bounded either way.
    found = await deps.discoverySlots.run(server.team_id, stop, () => discoverCapabilities(upstreamTargetOf(deps, server), stop));
  } catch (error) {
    // Nothing was asked of the upstream: nothing learnt about it, so nothing recorded on the server.
    if (error instanceof DiscoverySlotWaitEnded) {
      if (signal?.aborted) throw new AppError('unavailable', 'The refresh was stopped');
      throw new AppError('unavailable', "The catalog is busy discovering other servers (of this team, or as many as it runs at once); the server's capabilities are unchanged; try again later");
    }
    if (!(error instanceof DiscoveryError)) throw error;
    // Stopped by the caller (shutdown): nothing was learnt about the upstream.
    if (signal?.aborted) throw new AppError('unavailable', 'The refresh was stopped');
    const message = refreshErrorMessage(error);
    const recorded = await deps.db.transaction(async (tx) => {
      if (!(await lockedUnderLease(tx))) return false;
      await recordRefreshOutcome(tx, server.id, message);
      await auditRefresh(tx, context, server, { outcome: 'failed', errorClass: error.errorClass });
      return true;
    });
    // The old connection failed: that says nothing about the new one.
    if (!recorded) return null;
    // The cause's class, status and first words only: its message may hold the upstream's whole answer.
    deps.logger.warn({ serverId: server.id, errorClass: error.errorClass, cause: upstreamErrorForLog(error.cause) }, 'MCP server discovery failed');
    throw new AppError('unavailable', message);
  } finally {
    following?.release();
  }

  let exposureChanged = false;
  const answer = await deps.db.transaction(async (tx) => {
    const locked = await lockedUnderLease(tx);
    if (!locked) return null;
    // Approvals wait for this refresh from here: what it decides about the exposure holds when it commits.
    await lockPresentCapabilities(tx, server.id);
    const before = await listServerCapabilities(tx, server.id);
    const present = new Set(found.map((item) => `${item.kind}\u0000${item.name}`));
    const goneIds = before.filter((row) => row.gone_at === null && !present.has(`${row.kind}\u0000${row.name}`)).map((row) => row.id);
    await upsertCapabilities(tx, server.id, found);
    await markCapabilitiesGone(tx, goneIds);
    if (goneIds.length > 0) await pruneGoneUnapprovedCapabilities(tx, server.id, MAX_GONE_UNAPPROVED_PER_SERVER);
    await recordRefreshOutcome(tx, server.id, null);
    const counts = refreshCounts(found, before, goneIds);
    exposureChanged = refreshChangesExposure(found, before, goneIds);
    await auditRefresh(tx, context, locked, { outcome: 'succeeded', ...counts });
    return capabilityPage(tx, server.id, false, answerPage);
  });
  if (answer === null) return null;
  // Edges remember what gateways expose: an exposed capability that changed or went, or one exposed again, must be looked up again.
  if (exposureChanged) await announceServerExposureChange(deps, server.id);
  return answer;
}

/** A page of the server's stored capabilities, by kind then name; gone ones only when asked for. */
export async function listCapabilities(deps: CatalogDeps, request: ListCapabilitiesRequest): Promise<ListCapabilitiesResponse> {
  const server = await teamServer(deps, request.teamId, request.serverId);
  return capabilityPage(deps.db, server.id, request.includeGone, request.page);
}
