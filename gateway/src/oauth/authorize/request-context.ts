import { ActorKind, type RequestContext } from '@platform/proto/gen/platform/common/v1/common';
import type { Request, Response } from 'express';
import { requestIdOf } from '../../request-id';
import type { SignedInPerson } from '../session';

/** Who asked, for the audit entries of consent and code issue: the signed-in person, by browser session. */
export function personContext(req: Request, res: Response, session: SignedInPerson): RequestContext {
  const principal = session.principal;
  return {
    requestId: requestIdOf(res),
    clientIp: req.ip ?? '',
    viaKind: 'session',
    viaName: '',
    actor: {
      kind: ActorKind.ACTOR_KIND_USER,
      userId: principal.personId,
      displayName: principal.displayName,
      email: principal.email,
      apiKeyName: '',
      serviceAccountId: '',
    },
  };
}
