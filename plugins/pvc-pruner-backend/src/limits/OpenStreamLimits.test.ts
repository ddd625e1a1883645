import { mockCredentials } from '@backstage/backend-test-utils';
import { OpenStreamLimits } from './OpenStreamLimits';
import { TooManyRequestsError } from './TooManyRequestsError';

const alice = mockCredentials.user('user:default/alice');
const bob = mockCredentials.user('user:default/bob');
const service = mockCredentials.service('plugin:catalog');

describe('OpenStreamLimits', () => {
  it('counts each user and service apart, and frees a slot once however often it is released', () => {
    const limits = new OpenStreamLimits(1);
    const release = limits.acquire(alice);
    expect(() => limits.acquire(alice)).toThrow(TooManyRequestsError);
    expect(() => limits.acquire(alice)).toThrow(
      'You have 1 event stream of prune jobs open on this Backstage instance (the limit is 1); close a page that follows a prune, or wait for one to finish',
    );
    limits.acquire(bob);
    limits.acquire(service);

    release();
    release();

    expect(limits.openFor(alice)).toBe(0);
    const again = limits.acquire(alice);
    expect(() => limits.acquire(alice)).toThrow(TooManyRequestsError);
    again();
    expect(limits.openFor(bob)).toBe(1);
  });
});
