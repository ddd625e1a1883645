import { Faults } from './faults';

describe('Faults', () => {
  it('answers an injected 429 with the Retry-After the rule asks for', () => {
    const faults = new Faults();
    faults.add({ verb: 'delete', status: 429, retryAfterSeconds: 7 });
    const { error } = faults.evaluate({ verb: 'delete' });
    expect(error?.code).toBe(429);
    expect(error?.toStatus()).toMatchObject({
      reason: 'TooManyRequests',
      details: { retryAfterSeconds: 7 },
    });
    expect(faults.evaluate({ verb: 'get' }).error).toBeUndefined();
  });
});
