import { mcpCallDuration } from '@platform/runtime';
import type { McpCallOutcome } from './call-record';

/**
 * The methods `platform_mcp_call_duration_seconds` names; any other (a client may send any string) is counted as
 * `other`, so a client cannot add series. Notifications are not calls (never recorded).
 */
const KNOWN_METHODS = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
]);

/**
 * Error classes are the gateway's own words (docs/gateway.md, Errors), never a client's or an upstream's; past this
 * many distinct ones a new one is counted as `other` all the same, so a mistake can never grow the series unbounded.
 */
const MAX_ERROR_CLASSES = 32;
const errorClasses = new Set<string>();

function errorClassLabel(errorClass: string): string {
  if (errorClasses.has(errorClass)) return errorClass;
  if (errorClasses.size >= MAX_ERROR_CLASSES) return 'other';
  errorClasses.add(errorClass);
  return errorClass;
}

/** Counts and times one request served through a gateway, as its call record says (docs/operations.md). */
export function countMcpCall(method: string, outcome: McpCallOutcome, errorClass: string, seconds: number): void {
  mcpCallDuration.observe(KNOWN_METHODS.has(method) ? method : 'other', outcome, errorClassLabel(errorClass), seconds);
}
