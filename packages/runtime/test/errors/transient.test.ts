import { credentials, Client as GrpcClient, Metadata, status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { Client } from 'pg';
import { CacheClosedError, CacheTimeoutError, CacheUnavailableError } from '../../src/cache';
import { DatabaseUnavailableError, type Database } from '../../src/db';
import { AppError, isTransientFailure } from '../../src/errors';
import { createLogger } from '../../src/logging/logger';
import { PGLITE_START_TIMEOUT_MS, startedMemoryPglite } from '../db/memory-pglite';

/** What a statement that the database refuses throws (PGlite raises PostgreSQL's own errors, SQLSTATE and all). */
async function sqlError(db: Database, sql: string): Promise<unknown> {
  return db.transaction((tx) => tx.query(sql)).then(
    () => {
      throw new Error(`${sql} did not fail`);
    },
    (error: unknown) => error,
  );
}

const raise = (state: string) => `DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '${state}'; END $$`;

/** A real gRPC call to a port nobody listens on: UNAVAILABLE from grpc-js itself. */
function grpcCallToNowhere(): Promise<ServiceError> {
  const client = new GrpcClient('127.0.0.1:1', credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/test.Nothing/Call',
      (value: Buffer) => value,
      (value: Buffer) => value,
      Buffer.alloc(0),
      { deadline: Date.now() + 5_000 },
      (error) => {
        client.close();
        resolve(error!);
      },
    );
  });
}

describe('isTransientFailure: what an event consumer retries for ever instead of parking', () => {
  let db: Database;
  beforeAll(async () => {
    db = await startedMemoryPglite(createLogger({ level: 'silent' }));
  }, PGLITE_START_TIMEOUT_MS);
  afterAll(() => db.close());

  it('holds for a dependency down or busy', async () => {
    const refused = await new Client({ host: '127.0.0.1', port: 1, connectionTimeoutMillis: 5_000 }).connect().catch((error: unknown) => error);
    const unavailable = await grpcCallToNowhere();
    expect(unavailable.code).toBe(GrpcStatus.UNAVAILABLE);
    const transient: Array<[string, unknown]> = [
      ['DatabaseUnavailableError', new DatabaseUnavailableError(refused)],
      ['a connection refused, as the driver throws it', refused],
      ['CacheUnavailableError', new CacheUnavailableError()],
      ['CacheTimeoutError', new CacheTimeoutError(500)],
      ['another service unavailable (gRPC UNAVAILABLE)', new AppError('unavailable', 'Service unavailable')],
      ['another service too slow (gRPC DEADLINE_EXCEEDED)', new AppError('deadline_exceeded', 'The service did not answer in time')],
      ['a rate limit (gRPC RESOURCE_EXHAUSTED with its code)', new AppError('slow_down', 'Too many requests')],
      ['maintenance mode', new AppError('maintenance', 'Down for maintenance')],
      ['a raw gRPC UNAVAILABLE', unavailable],
      ['a serialization failure (40001)', await sqlError(db, raise('40001'))],
      ['a deadlock (40P01)', await sqlError(db, raise('40P01'))],
      ['a server shutting down (57P01)', await sqlError(db, raise('57P01'))],
      ['an outage wrapped by a handler', new AppError('internal', 'Internal error', { cause: new DatabaseUnavailableError(refused) })],
    ];
    for (const [what, error] of transient) expect([what, isTransientFailure(error)]).toEqual([what, true]);
  });

  it('does not hold for a failure the same event meets every time', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS once (id int PRIMARY KEY)');
    await db.query('INSERT INTO once VALUES (1) ON CONFLICT DO NOTHING');
    const tooLarge = Object.assign(new Error('8 RESOURCE_EXHAUSTED: Received message larger than max'), {
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      details: 'Received message larger than max',
      metadata: new Metadata(),
    });
    const permanent: Array<[string, unknown]> = [
      ['a handler bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
      ['a unique violation (23505)', await sqlError(db, 'INSERT INTO once VALUES (1)')],
      ['a NUL in text (22021)', await sqlError(db, "SELECT convert_from('\\x00'::bytea, 'UTF8')")],
      ['a syntax error (42601)', await sqlError(db, 'SELEC 1')],
      ['a conflict from another service', new AppError('conflict', 'Already exists')],
      ['an internal error of another service', new AppError('internal', 'Internal error')],
      ['a bare RESOURCE_EXHAUSTED (a message over the size limit)', tooLarge],
      ['a cache used after close', new CacheClosedError()],
      ['a thrown string', 'nope'],
      ['nothing', undefined],
    ];
    for (const [what, error] of permanent) expect([what, isTransientFailure(error)]).toEqual([what, false]);
  });
});
