/**
 * One request made through a gateway, as the /mcp data plane reports it (spec §2.9). The data plane hands it to
 * the call recorder (call-recorder.ts), which publishes it on the `mcp-calls.v1` topic off the hot path; the
 * catalog service stores it and serves `GET /v1/teams/{team}/calls`. The record id (int64) is assigned on storage.
 */
export interface McpCallEvent {
  /** The gateway's team: the team whose call list shows the record. */
  teamId: string;
  occurredAt: string;
  /** The JSON-RPC method, for example `tools/call`; `notifications/...` are not recorded. */
  method: string;
  /** The tool or prompt name the client used, or the resource URI; empty for methods without one. */
  exposedName: string;
  gateway: { id: string; slug: string; name: string };
  /** Absent when the request never reached an upstream (for example a refused or unknown name, or `tools/list`). */
  server?: { id: string; slug: string; name: string };
  principal: {
    kind: 'user' | 'api_key' | 'service_account';
    userId?: string;
    displayName?: string;
    email?: string;
    apiKeyName?: string;
    oauthClientName?: string;
    oauthClientVerified?: boolean;
    serviceAccountId?: string;
    /**
     * The service account's team by id: what the catalog looks the account up by when the record is read (a slug
     * may be renamed, or taken by another team, after the call). The slug is kept as it was, for display.
     */
    serviceAccountTeamId?: string;
    serviceAccountTeamSlug?: string;
  };
  /** The MCP client's name from its `initialize` (clientInfo.name). */
  clientName: string;
  /** 'ok', 'error', 'refused', 'timeout', 'upstream_unavailable' or 'cancelled'. */
  outcome: McpCallOutcome;
  /** Empty when ok; else one of docs/gateway.md's Errors table: 'not_exposed', 'timeout', 'connection_refused', 'protocol_error', 'upstream_error', ... */
  errorClass: string;
  latencyMs: number;
  requestBytes: number;
  responseBytes: number;
  requestId: string;
  /** The auth provider whose token the upstream call carried (OAuth-mode servers); absent otherwise. */
  providerSlug?: string;
  /**
   * Present only when the server captures payloads (capturePayloads). The recorder caps each (CALL_PAYLOAD_CAP_BYTES
   * in call-recorder.ts); a data plane that already cut one says so with its `...Truncated` flag.
   */
  payloads?: { request: string; response: string; requestTruncated?: boolean; responseTruncated?: boolean };
}

export type McpCallOutcome = 'ok' | 'error' | 'refused' | 'timeout' | 'upstream_unavailable' | 'cancelled';

/** Takes call records from the data plane without ever blocking or failing the request that produced them. */
export interface CallRecorder {
  record(call: McpCallEvent): void;
  /** Publishes what is buffered (on shutdown). */
  flush(): Promise<void>;
}
