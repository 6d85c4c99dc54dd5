import { z } from 'zod';
import { AppError } from '@platform/runtime';

/** The one error body of the edge: `{"error": {code, message, requestId, fields?}}`. */
export const errorBodySchema = z
  .object({
    error: z.object({
      code: z.string().meta({ description: 'Stable machine-readable code; see docs/api.md for the table.' }),
      message: z.string().meta({ description: 'Human-readable; may change; never carries secrets.' }),
      requestId: z.string().meta({ description: 'Echoes the X-Request-Id response header.' }),
      fields: z
        .array(z.object({ field: z.string(), problem: z.string() }))
        .optional()
        .meta({ description: 'Every invalid field, by dotted path (for example servers.0.prefix).' }),
    }),
  })
  .meta({ id: 'Error' });

export type ErrorBody = z.infer<typeof errorBodySchema>;

export function errorBody(error: AppError, requestId: string): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      requestId,
      ...(error.fields && error.fields.length > 0 ? { fields: error.fields } : {}),
    },
  };
}
