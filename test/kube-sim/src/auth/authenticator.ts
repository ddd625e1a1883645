import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors';
import type { RequestUser } from './rbac';
import { clientCertificateUser } from './x509';

/** One bearer-token method (static tokens, OIDC, AWS IAM, ...). */
export interface TokenAuthenticator {
  /**
   * The token's user; undefined when the token is not of this method;
   * throws (with a reason that never quotes the token) when it is, but is not valid.
   */
  authenticateToken(token: string): Promise<RequestUser | undefined>;
}

export const AUTHENTICATED_GROUP = 'system:authenticated';

/** kube-apiserver's 401 Status, whatever the reason; `reasons` say why each method refused, for the request log only. */
export class UnauthenticatedError extends ApiError {
  constructor(readonly reasons: string[]) {
    super(401, 'Unauthorized', 'Unauthorized');
  }
}

/**
 * kube-apiserver's union authenticator: the client certificate first, then each bearer
 * token method in turn. The first that succeeds wins; a failure of one (an untrusted
 * certificate, say) does not stop another (a valid token) from succeeding.
 */
export class RequestAuthenticator {
  constructor(private readonly tokenMethods: TokenAuthenticator[]) {}

  async authenticate(req: IncomingMessage): Promise<RequestUser> {
    const reasons: string[] = [];
    const fromCertificate = clientCertificateUser(req.socket);
    if (fromCertificate instanceof Error) reasons.push(fromCertificate.message);
    else if (fromCertificate) return withAuthenticatedGroup(fromCertificate);

    const bearer = req.headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1];
    const token = bearer?.trim();
    if (token) {
      for (const method of this.tokenMethods) {
        try {
          const user = await method.authenticateToken(token);
          if (user) return withAuthenticatedGroup(user);
        } catch (e) {
          reasons.push((e as Error).message);
        }
      }
      if (reasons.length === 0) reasons.push('unknown bearer token');
    }
    throw new UnauthenticatedError(reasons);
  }
}

function withAuthenticatedGroup(user: RequestUser): RequestUser {
  const groups = user.info.groups.includes(AUTHENTICATED_GROUP)
    ? user.info.groups
    : [...user.info.groups, AUTHENTICATED_GROUP];
  return { ...user, info: { ...user.info, groups } };
}
