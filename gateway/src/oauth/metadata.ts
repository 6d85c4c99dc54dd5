import type { Express, Request, Response } from 'express';
import { AppError } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { setRouteTemplate } from '../route-template';
import { allowAnyOrigin } from './cors';
import { isSlug } from '../slug';
import { gatewayResource } from './resource';

/** Discovery documents change only with the installation's settings: cacheable, but briefly. */
const DISCOVERY_CACHE = 'public, max-age=300';

export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp/:slug';

/** RFC 8414 server metadata. `issuer` is APP_URL byte for byte (no trailing slash); there are no scopes. */
export function authorizationServerMetadata(appUrl: string): Record<string, unknown> {
  return {
    issuer: appUrl,
    authorization_endpoint: `${appUrl}/oauth/authorize`,
    token_endpoint: `${appUrl}/oauth/token`,
    registration_endpoint: `${appUrl}/oauth/register`,
    revocation_endpoint: `${appUrl}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
  };
}

/** RFC 9728 protected-resource metadata of a gateway; answered for any well-formed slug without a lookup. */
export function protectedResourceMetadata(deps: EdgeDeps, slug: string): Record<string, unknown> {
  return {
    resource: gatewayResource(deps.settings.appUrl, slug),
    authorization_servers: [deps.settings.appUrl],
    bearer_methods_supported: ['header'],
    resource_name: deps.settings.instanceName,
  };
}

export function mountDiscovery(app: Express, deps: EdgeDeps): void {
  const cors = allowAnyOrigin('GET');
  const serverMetadata = authorizationServerMetadata(deps.settings.appUrl);

  app.options(AUTHORIZATION_SERVER_METADATA_PATH, cors);
  app.get(AUTHORIZATION_SERVER_METADATA_PATH, cors, (_req: Request, res: Response) => {
    res.set('Cache-Control', DISCOVERY_CACHE).json(serverMetadata);
  });

  const template = (_req: Request, res: Response, next: () => void) => {
    setRouteTemplate(res, '/.well-known/oauth-protected-resource/mcp/{slug}');
    next();
  };
  app.options(PROTECTED_RESOURCE_METADATA_PATH, template, cors);
  app.get(PROTECTED_RESOURCE_METADATA_PATH, template, cors, (req: Request, res: Response) => {
    const slug = req.params.slug;
    if (!isSlug(slug)) throw AppError.notFound('Gateway');
    res.set('Cache-Control', DISCOVERY_CACHE).json(protectedResourceMetadata(deps, slug));
  });
}
