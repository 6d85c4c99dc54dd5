import { InvalidSchemaNameError } from './errors';

const SCHEMA_NAME = /^[a-z][a-z0-9_]*$/;

/** Schema names are spliced into SQL (identifiers cannot be parameters), so only a safe shape is accepted. */
export function assertSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema) || schema.length > 63) throw new InvalidSchemaNameError(schema);
  return schema;
}
