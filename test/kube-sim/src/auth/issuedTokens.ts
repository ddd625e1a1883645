import { randomBytes } from 'node:crypto';
import type { TokenAuthenticator } from './authenticator';
import type { AuthenticatedUser } from './types';

/** Access tokens the simulator's own token endpoints issued, each for a user until it expires. */
export class IssuedAccessTokens implements TokenAuthenticator {
  private readonly tokens = new Map<
    string,
    { user: AuthenticatedUser; expiresAt: number }
  >();

  constructor(
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  issue(user: AuthenticatedUser, lifetimeSeconds: number) {
    const token = `${this.prefix}${randomBytes(32).toString('base64url')}`;
    this.tokens.set(token, {
      user,
      expiresAt: this.now() + lifetimeSeconds * 1000,
    });
    return token;
  }

  async authenticateToken(token: string) {
    if (!token.startsWith(this.prefix)) return undefined;
    const issued = this.tokens.get(token);
    if (!issued) throw new Error('unknown access token');
    if (this.now() >= issued.expiresAt) {
      this.tokens.delete(token);
      throw new Error(`${issued.user.method}: access token expired`);
    }
    return { info: issued.user };
  }
}
