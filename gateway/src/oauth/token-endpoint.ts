import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveAheadOfExpress } from '../ahead-of-express';
import { clientAddress, type TrustProxy } from '../client-address';
import type { EdgeDeps } from '../edge-deps';
import { answerOAuthPost } from './endpoint';
import { TOKEN_PATH, tokenEndpoint } from './token';

/** The OAuth token endpoint, served ahead of the edge's express app. */
export interface TokenEndpoint {
  /** Serves the request when its path is exactly `/oauth/token` and returns true; false leaves it to the rest of the edge. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

const WITH_QUERY = `${TOKEN_PATH}?`;

/**
 * `/oauth/token` straight from node's HTTP server, as `/mcp/{slug}` is (docs/gateway.md, "The hot path"): every
 * connected client refreshes its tokens here, and express's router, response helpers and `req.ip` cost a refresh grant
 * 15-20 % more of the machine's CPU (docs/performance.md). It answers exactly as the express route did, through the same code (`answerOAuthPost`,
 * `tokenEndpoint`), with the edge's request id, span, metric and access log; the client address follows TRUST_PROXY
 * by the function express's `req.ip` uses (`trustProxy`, compiled once per edge).
 */
export function createTokenEndpoint(deps: EdgeDeps, options: { trustProxy: TrustProxy }): TokenEndpoint {
  const endpoint = tokenEndpoint(deps);
  return {
    serve(req, res) {
      const url = req.url ?? '';
      if (url !== TOKEN_PATH && !url.startsWith(WITH_QUERY)) return false;
      serveAheadOfExpress(deps.logger, req, res, TOKEN_PATH, () =>
        answerOAuthPost(deps, endpoint, req, res, () => clientAddress(req, options.trustProxy)),
      );
      return true;
    },
  };
}
