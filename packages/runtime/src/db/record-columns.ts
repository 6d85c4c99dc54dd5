/**
 * The names of a column definition list (`"id uuid, name text"` → `"id, name"`): a statement that reads a JSON
 * parameter with `json_to_recordset(…) AS (<list>)` (or its jsonb twin) and inserts the same columns names them
 * once, with their types.
 */
export function columnNames(record: string): string {
  return record
    .split(',')
    .map((column) => column.trim().split(/\s+/)[0])
    .join(', ');
}
