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
 * Walks the servers in gateway order and keeps each capability whose exposed name is still free in its kind's
 * namespace; a later one that collides is reported, never exposed (earlier servers win).
 */
export function assignExposedNames<S extends { prefix: string }, C extends NamedCapability>(
  servers: readonly S[],
  capabilitiesOf: (server: S) => readonly C[],
): { kept: Map<S, { capability: C; exposedName: string }[]>; collisions: string[] } {
  const taken = new Set<string>();
  const kept = new Map<S, { capability: C; exposedName: string }[]>();
  const collisions: string[] = [];
  for (const server of servers) {
    const exposed: { capability: C; exposedName: string }[] = [];
    for (const capability of capabilitiesOf(server)) {
      const exposedName = exposedNameOf(capability.kind, server.prefix, capability.name);
      const key = `${capability.kind}\u0000${exposedName}`;
      if (taken.has(key)) {
        collisions.push(`${KIND_LABELS[capability.kind] ?? capability.kind} '${exposedName}'`);
        continue;
      }
      taken.add(key);
      exposed.push({ capability, exposedName });
    }
    kept.set(server, exposed);
  }
  return { kept, collisions };
}
