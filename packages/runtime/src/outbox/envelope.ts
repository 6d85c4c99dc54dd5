import { z } from 'zod';

/** The envelope every event on the bus carries (its JSON is the message value). */
export interface DomainEvent<T = unknown> {
  /** UUID; consumers deduplicate on it. */
  id: string;
  /** What happened, `<aggregate>.<verb>` (for example `team.member_add`). */
  type: string;
  /** The service that wrote it. */
  source: string;
  /** ISO 8601 time of writing. */
  occurredAt: string;
  data: T;
}

const envelopeSchema = z.object({
  id: z.uuid(),
  type: z.string().min(1),
  source: z.string().min(1),
  occurredAt: z.string().min(1),
  data: z.unknown(),
});

/** The envelope in a message value, or null when the value is not one (malformed JSON or shape). */
export function parseDomainEvent(value: string): DomainEvent<unknown> | null {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return null;
  }
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success || !('data' in (json as object))) return null;
  return parsed.data as DomainEvent<unknown>;
}
