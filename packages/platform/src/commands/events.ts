import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  ConfigError,
  createDatabase,
  createLogger,
  discardParkedEvent,
  environmentSchema,
  listParkedEvents,
  replayParkedEvent,
  SERVICE_NAMES,
  singleEventHandler,
  storageConfig,
  type Database,
  type EventConsumer,
  type Logger,
  type ParkedEvent,
} from '@platform/runtime';
import { consumerOptions } from '../modules/consumer-options';
import { SERVICES } from '../services';

const USAGE = [
  'usage: platform events parked [--consumer <name>]                 list parked events (never their payload)',
  '       platform events replay --consumer <name> [--event-id <id>]  run the handler again; replayed events leave the list',
  '       platform events discard --consumer <name> --event-id <id>   drop a parked event for good',
  '',
].join('\n');

const EVENT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Exit codes: done; a replay still failing, an event not parked or the database refusing; usage. */
export const EVENTS_EXIT = { done: 0, failed: 1, usage: 2 } as const;

/** A consumer the command can reach: its service's schema holds its parked events. */
interface KnownConsumer {
  schema: string;
  consumer: EventConsumer;
}

/**
 * `platform events parked|replay|discard`: the events a service's consumer set aside because its handler kept failing
 * (docs/operations.md, Parked events). Runs against the server's own database (DATABASE_URL, or the embedded one under
 * DATA_DIR while the server is stopped) and nothing else; a replay runs the consumer's own handler, built without
 * starting its service, in one transaction per event with the deletion of its parked row.
 */
export async function eventsCommand(args: string[]): Promise<number> {
  let parsed: { action: string | undefined; consumer: string | undefined; eventId: string | undefined; help: boolean };
  try {
    const { values, positionals } = parseArgs({
      args,
      options: { consumer: { type: 'string' }, 'event-id': { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
      allowPositionals: true,
    });
    if (positionals.length > 1) return usage(`unexpected argument ${positionals[1]}`);
    parsed = { action: positionals[0], consumer: values.consumer, eventId: values['event-id'], help: values.help };
  } catch (error) {
    return usage(error instanceof Error ? error.message : String(error));
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    return EVENTS_EXIT.done;
  }
  const { action, eventId } = parsed;
  if (action !== 'parked' && action !== 'replay' && action !== 'discard') return usage(action ? `unknown action ${action}` : 'name an action');
  if (action !== 'parked' && !parsed.consumer) return usage(`${action} needs --consumer`);
  if (action === 'discard' && !eventId) return usage('discard needs --event-id');
  if (eventId !== undefined && !EVENT_ID.test(eventId)) return usage(`--event-id ${JSON.stringify(eventId)} is not an event id (a UUID)`);

  // The environment only: nothing here needs keys, Redis or Kafka.
  const environment = environmentSchema.safeParse(process.env);
  if (!environment.success) {
    const problems = environment.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
    return usage(new ConfigError(problems).message);
  }
  const env = environment.data;
  // Log lines (a handler's own) go to stderr: stdout is the command's answer.
  const logger = createLogger({ level: env.LOG_LEVEL, destination: process.stderr });
  const consumers = knownConsumers(logger);
  const wanted = parsed.consumer === undefined ? undefined : consumers.get(parsed.consumer);
  if (parsed.consumer !== undefined && !wanted) {
    return usage(`unknown consumer ${parsed.consumer}; consumers: ${[...consumers.keys()].join(', ')}`);
  }

  const storage = storageConfig(env);
  // Opening a directory that is not there would make an empty database and answer "no parked events".
  if (storage.kind === 'pglite' && !existsSync(storage.dataDir)) return usage(`no embedded database under ${storage.dataDir} (DATA_DIR); set DATA_DIR, or DATABASE_URL`);
  let db: Database;
  try {
    // An embedded database the serving process has open is refused (DataDirInUseError): stop it first.
    db = createDatabase(storage, logger, 'platform-events');
  } catch (error) {
    process.stderr.write(`events: ${error instanceof Error ? error.message : String(error)}\n`);
    return EVENTS_EXIT.failed;
  }
  try {
    if (action === 'parked') return await list(db, wanted ? [wanted] : [...consumers.values()]);
    if (action === 'discard') return await discard(db, wanted!, eventId!);
    return await replay(db, wanted!, eventId);
  } catch (error) {
    // Errors from the db module carry no bound values.
    process.stderr.write(`events: ${error instanceof Error ? error.message : String(error)}\n`);
    return EVENTS_EXIT.failed;
  } finally {
    await db.close();
  }
}

/** Every service's consumers by name, built alone (no service is started). */
function knownConsumers(logger: Logger): Map<string, KnownConsumer> {
  const known = new Map<string, KnownConsumer>();
  for (const name of SERVICE_NAMES) {
    for (const consumer of SERVICES[name].consumers?.({ name, logger: logger.child({ service: name }) }) ?? []) {
      known.set(consumer.name, { schema: name, consumer });
    }
  }
  return known;
}

/** One line per parked event, tab-separated under a header; the error on one line. */
async function list(db: Database, consumers: KnownConsumer[]): Promise<number> {
  const events: ParkedEvent[] = [];
  for (const schema of new Set(consumers.map((known) => known.schema))) {
    // A service never deployed on this database has no schema yet, so nothing parked.
    const table = await db.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [`${schema}.parked_events`]);
    if (!table.rows[0]?.present) continue;
    const names = new Set(consumers.filter((known) => known.schema === schema).map((known) => known.consumer.name));
    events.push(...(await listParkedEvents(db, schema)).filter((event) => names.has(event.consumer)));
  }
  if (events.length === 0) {
    process.stderr.write('no parked events\n');
    return EVENTS_EXIT.done;
  }
  const rows = events.map((event) =>
    [
      event.consumer,
      event.eventId,
      event.type ?? '',
      event.topic,
      event.partition,
      event.offset,
      event.attempts,
      event.parkedAt.toISOString(),
      oneLine(`${event.errorClass}: ${event.errorMessage}`),
    ].join('\t'),
  );
  process.stdout.write(['consumer\tevent_id\ttype\ttopic\tpartition\toffset\tattempts\tparked_at\terror', ...rows, ''].join('\n'));
  return EVENTS_EXIT.done;
}

async function discard(db: Database, { schema, consumer }: KnownConsumer, eventId: string): Promise<number> {
  if (!(await discardParkedEvent(db, schema, consumer.name, eventId))) return notParked(consumer, eventId);
  process.stdout.write(`discarded ${eventId}\n`);
  return EVENTS_EXIT.done;
}

/** The given event, or every parked event of the consumer, oldest first; each in a transaction of its own. */
async function replay(db: Database, { schema, consumer }: KnownConsumer, eventId: string | undefined): Promise<number> {
  const ids = eventId ? [eventId] : (await listParkedEvents(db, schema, consumer.name)).map((event) => event.eventId);
  if (ids.length === 0) {
    process.stderr.write(`no parked events for ${consumer.name}\n`);
    return EVENTS_EXIT.done;
  }
  const handler = singleEventHandler(consumerOptions(consumer));
  let failed = 0;
  for (const id of ids) {
    const outcome = await replayParkedEvent({ db, schema, consumer: consumer.name, eventId: id, handler });
    if (outcome.result === 'replayed') process.stdout.write(`replayed ${id}\n`);
    else if (outcome.result === 'gone') {
      if (eventId) return notParked(consumer, id);
      process.stdout.write(`${id} is no longer parked\n`);
    } else {
      failed += 1;
      process.stderr.write(`still failing ${id}: ${oneLine(`${outcome.errorClass}: ${outcome.errorMessage}`)} (left parked)\n`);
    }
  }
  return failed > 0 ? EVENTS_EXIT.failed : EVENTS_EXIT.done;
}

function notParked(consumer: EventConsumer, eventId: string): number {
  process.stderr.write(`events: no parked event ${eventId} for ${consumer.name}\n`);
  return EVENTS_EXIT.failed;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ');
}

function usage(problem: string): number {
  process.stderr.write(`events: ${problem}\n${USAGE}`);
  return EVENTS_EXIT.usage;
}
