/**
 * How a gateway names what its servers offer. Tools and prompts are exposed as `{prefix}__{name}` (the bare name
 * when the prefix is empty); resources and resource templates keep their URI (template), which already says where
 * they come from. Each kind is its own namespace: a tool and a prompt may share a name.
 */
export const PREFIX_SEPARATOR = '__';

export function exposedNameOf(kind: string, prefix: string, name: string): string {
  if ((kind === 'tool' || kind === 'prompt') && prefix !== '') return `${prefix}${PREFIX_SEPARATOR}${name}`;
  return name;
}

/** A capability of one of a gateway's servers, before naming. */
export interface NamedCapability {
  kind: string;
  name: string;
}

/** How messages name each kind. */
const KIND_LABELS: Record<string, string> = { tool: 'tool', prompt: 'prompt', resource: 'resource URI', resource_template: 'resource template' };

/**
 * Gives each exposed name of a kind to one capability and reports the others, never exposed. The name goes to the
 * capability that claimed it first (`claimedAt`, smallest first; ties in gateway order): at run time its approval, so
 * a capability approved later can never take a name from one already exposed under it. Without `claimedAt`, earlier
 * servers win. The kept capabilities stay in each server's own order.
 */
export function assignExposedNames<S extends { prefix: string }, C extends NamedCapability>(
  servers: readonly S[],
  capabilitiesOf: (server: S) => readonly C[],
  claimedAt: (capability: C) => number = () => 0,
): { kept: Map<S, { capability: C; exposedName: string }[]>; collisions: string[] } {
  const candidates = servers.flatMap((server) =>
    capabilitiesOf(server).map((capability) => ({ server, capability, exposedName: exposedNameOf(capability.kind, server.prefix, capability.name) })),
  );
  // A stable sort: candidates that claimed their names at the same time stay in gateway order.
  const byClaim = candidates.map((candidate) => ({ candidate, at: claimedAt(candidate.capability) })).sort((a, b) => a.at - b.at);
  const taken = new Set<string>();
  const winners = new Set<C>();
  const collisions: string[] = [];
  for (const { candidate } of byClaim) {
    const key = `${candidate.capability.kind}\u0000${candidate.exposedName}`;
    if (taken.has(key)) {
      collisions.push(`${KIND_LABELS[candidate.capability.kind] ?? candidate.capability.kind} '${candidate.exposedName}'`);
      continue;
    }
    taken.add(key);
    winners.add(candidate.capability);
  }
  const kept = new Map<S, { capability: C; exposedName: string }[]>(servers.map((server) => [server, []]));
  for (const candidate of candidates) {
    if (winners.has(candidate.capability)) kept.get(candidate.server)!.push({ capability: candidate.capability, exposedName: candidate.exposedName });
  }
  return { kept, collisions };
}
