import { BackstageCredentials } from '@backstage/backend-plugin-api';
import { TooManyRequestsError } from './TooManyRequestsError';

/** Whom a stream is counted against: the user, or the service. */
function principalOf(credentials: BackstageCredentials): string {
  const principal = credentials.principal as {
    type: string;
    userEntityRef?: string;
    subject?: string;
  };
  return principal.type === 'user'
    ? `user ${principal.userEntityRef}`
    : `${principal.type} ${principal.subject ?? ''}`;
}

/**
 * At most `perUser` open event streams per user (or service) in this
 * process: each one polls the database until its job ends, and holds a
 * connection. Counted in memory, since a stream lives in the process that
 * serves it.
 */
export class OpenStreamLimits {
  private readonly open = new Map<string, number>();

  constructor(private readonly perUser: number) {}

  /**
   * Takes a slot for the caller, or throws TooManyRequestsError saying how
   * many they have open. The returned function frees the slot; calling it
   * again does nothing.
   */
  acquire(credentials: BackstageCredentials): () => void {
    const key = principalOf(credentials);
    const count = this.open.get(key) ?? 0;
    if (count >= this.perUser)
      throw new TooManyRequestsError(
        `You have ${count} event ${
          count === 1 ? 'stream' : 'streams'
        } of prune jobs open on this Backstage instance (the limit is ${
          this.perUser
        }); close a page that follows a prune, or wait for one to finish`,
      );
    this.open.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(key) ?? 1) - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    };
  }

  /** How many streams the caller has open now. */
  openFor(credentials: BackstageCredentials): number {
    return this.open.get(principalOf(credentials)) ?? 0;
  }
}
