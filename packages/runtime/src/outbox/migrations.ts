import type { MigrationSource } from '../db/migrate';
import { assertSchemaName } from '../db/schema-name';

/** A runtime migration: SQL with `{{schema}}` standing for the service's schema. Ids start with `runtime_`. */
export interface RuntimeMigration {
  id: string;
  template: string;
}

/** The runtime's own tables, created in every service schema before the service's migrations. */
export const runtimeMigrations: readonly RuntimeMigration[] = [
  {
    id: 'runtime_0001_outbox',
    template: `
CREATE TABLE {{schema}}.outbox (
  id bigserial PRIMARY KEY,
  event_id uuid UNIQUE NOT NULL,
  topic text NOT NULL,
  key text,
  payload jsonb NOT NULL,
  headers jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
-- The relay only ever scans unsent rows; this index stays small however large the table grows.
CREATE INDEX outbox_unsent_idx ON {{schema}}.outbox (id) WHERE sent_at IS NULL;
CREATE INDEX outbox_sent_at_idx ON {{schema}}.outbox (sent_at) WHERE sent_at IS NOT NULL;

CREATE TABLE {{schema}}.processed_events (
  consumer text NOT NULL,
  event_id uuid NOT NULL,
  processed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);
`,
  },
  {
    // The relay claims a batch for a while (a lease) and publishes it outside any transaction; see relay.ts.
    id: 'runtime_0002_outbox_claims',
    template: `
ALTER TABLE {{schema}}.outbox ADD COLUMN claimed_until timestamptz, ADD COLUMN claimed_by uuid;
`,
  },
  {
    // The relay's housekeeping deletes processed-event marks past their retention, oldest first, in batches.
    id: 'runtime_0003_processed_events_age',
    template: `
CREATE INDEX processed_events_processed_at_idx ON {{schema}}.processed_events (processed_at);
`,
  },
  {
    // Events a consumer set aside because its handler kept failing (consume.ts), each with its processed mark, until
    // an operator replays or discards it (parked-events.ts). The message as received: its value is kept as text,
    // never jsonb, which would refuse the very values (an escaped NUL) that may have made the event fail.
    id: 'runtime_0004_parked_events',
    template: `
CREATE TABLE {{schema}}.parked_events (
  consumer text NOT NULL,
  event_id uuid NOT NULL,
  topic text NOT NULL,
  partition integer NOT NULL,
  message_offset bigint NOT NULL,
  message_key text,
  headers jsonb NOT NULL DEFAULT '{}',
  envelope text NOT NULL,
  error_class text NOT NULL,
  error_message text NOT NULL,
  attempts integer NOT NULL,
  parked_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);
`,
  },
];

/** The runtime migrations for one schema, ready for `migrate`. */
export function runtimeMigrationsFor(schema: string): MigrationSource[] {
  const safe = assertSchemaName(schema);
  return runtimeMigrations.map(({ id, template }) => ({ id, sql: template.replaceAll('{{schema}}', safe) }));
}
