/**
 * Validates a document against the official OpenAPI 3.x JSON schemas. Returns the problems found (empty when
 * valid). The validator is an ES module, hence the dynamic import.
 */
export async function openApiProblems(document: unknown): Promise<string[]> {
  const { Validator } = (await import('@seriousme/openapi-schema-validator')) as {
    Validator: new () => { validate(spec: unknown): Promise<{ valid: boolean; errors?: unknown }> };
  };
  const result = await new Validator().validate(document);
  if (result.valid) return [];
  return Array.isArray(result.errors) ? result.errors.map((e) => JSON.stringify(e)) : [String(result.errors)];
}
