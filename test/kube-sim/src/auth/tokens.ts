import { randomBytes } from 'node:crypto';
import type { TokenAuthenticator } from './authenticator';
import type { RequestUser } from './rbac';
import type { TokenGrant } from './types';

/** Static bearer tokens and their grants, as kube-apiserver's `--token-auth-file`. */
export class StaticTokens implements TokenAuthenticator {
  private readonly grants = new Map<string, TokenGrant>();

  /** Adds a token; returns it. A random token is made when none is given. */
  addToken(grant: TokenGrant, token = randomBytes(24).toString('hex')): string {
    this.grants.set(token, grant);
    return token;
  }

  removeToken(token: string) {
    this.grants.delete(token);
  }

  async authenticateToken(token: string): Promise<RequestUser | undefined> {
    const grant = this.grants.get(token);
    if (!grant) return undefined;
    return {
      info: { name: grant.user, groups: [], method: 'token' },
      grant,
    };
  }
}
