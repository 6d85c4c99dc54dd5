import type { RawUpstream } from '@platform/test';
import { answer, initializeResult, startRawUpstream, trickle } from '@platform/test';

/**
 * Answers `initialize` normally, then answers the `notifications/initialized` POST with HTTP 500 and a body that
 * trickles for ever: the SDK client reads that body whole, with no timeout of its own, inside `connect`.
 */
export function startTricklingUpstream(): Promise<RawUpstream> {
  return startRawUpstream((message, res) => {
    if (message?.method === 'initialize') {
      answer(res, message.id, initializeResult());
      return true;
    }
    if (message?.method !== 'notifications/initialized') return false;
    res.writeHead(500, { 'content-type': 'text/plain' });
    trickle(res, 'x');
    return true;
  });
}

/**
 * An SSE upstream (the legacy transport) whose event stream sends keep-alive comments for ever and never the
 * `endpoint` event: the SDK client waits for that event, with no timeout of its own, inside `connect`.
 */
export function startEndpointlessSseUpstream(): Promise<RawUpstream> {
  return startRawUpstream((_message, res, req) => {
    if (req.method !== 'GET') return false;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    trickle(res, ': keep-alive\n\n');
    return true;
  });
}
