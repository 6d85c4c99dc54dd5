import type { Express, NextFunction, Request, Response } from 'express';
import type { OAuthConnection } from '@platform/proto/gen/platform/identity/v1/oauth';
import { AppError } from '@platform/runtime';
import type { EdgeDeps } from '../edge-deps';
import { setRouteTemplate } from '../route-template';
import { personContext } from './authorize/request-context';
import { readForm } from './form-body';
import { connectedAppsPage } from './pages/connected-apps-page';
import { sendConnectionErrorPage } from './pages/error-page';
import { sendPage } from './pages/html';
import { formToken, sameOriginForm, signedInPerson, validFormToken, type SignedInPerson } from './session';

const PAGE_PATH = '/account/connected-apps';
const DISCONNECT_PATH = '/account/connected-apps/disconnect';
const PURPOSE = 'connected-apps';
/** The page shows at most this many connections (people have a handful). */
const MAX_LISTED = 200;

/** The connected-apps page of a person's account, with Disconnect buttons (§5.5). */
export function mountConnectedAppsPage(app: Express, deps: EdgeDeps): void {
  async function render(res: Response, session: SignedInPerson, notice?: string): Promise<void> {
    const listed = await deps.clients.identity.listConnections({ personId: session.personId, page: { pageSize: MAX_LISTED, cursor: '' } });
    const connections: OAuthConnection[] = listed.connections;
    const html = connectedAppsPage({
      instanceName: deps.settings.instanceName,
      email: session.principal.email,
      connections,
      action: DISCONNECT_PATH,
      csrf: formToken(session, PURPOSE),
      notice,
    });
    sendPage(res, 200, html, { hasForm: true });
  }

  const toSignIn = (res: Response) =>
    res.status(303).set({ Location: `/sign-in?return_to=${encodeURIComponent(PAGE_PATH)}`, 'Cache-Control': 'no-store' }).end();

  app.get(PAGE_PATH, (req: Request, res: Response, next: NextFunction) => {
    (async () => {
      const session = await signedInPerson(deps, req);
      if (!session) return toSignIn(res);
      await render(res, session, req.query.disconnected === '1' ? 'The application was disconnected.' : undefined);
    })().catch(next);
  });

  app.post(DISCONNECT_PATH, (req: Request, res: Response, next: NextFunction) => {
    setRouteTemplate(res, DISCONNECT_PATH);
    (async () => {
      const form = await readForm(req);
      const session = await signedInPerson(deps, req);
      if (!session) return toSignIn(res);
      const fail = (problem: string, status: number) =>
        sendConnectionErrorPage(res, { instanceName: deps.settings.instanceName, problem, status });
      if (!form.ok) return fail(`${form.problem}.`, 400);
      if (!sameOriginForm(deps, req) || !validFormToken(session, PURPOSE, form.params.get('csrf'))) {
        return fail('This form has expired or did not come from this site. Reload the page and try again.', 403);
      }
      const connectionId = form.params.get('connection_id') ?? '';
      try {
        await deps.clients.identity.revokeConnection({ context: personContext(req, res, session), personId: session.personId, connectionId });
      } catch (error) {
        if (!(error instanceof AppError) || (error.code !== 'not_found' && error.code !== 'invalid_request')) throw error;
        // Already gone (or never theirs): the page shows the current list either way.
      }
      res.status(303).set({ Location: `${PAGE_PATH}?disconnected=1`, 'Cache-Control': 'no-store' }).end();
    })().catch(next);
  });
}
