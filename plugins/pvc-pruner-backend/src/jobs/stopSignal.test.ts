import { stopSignal } from './stopSignal';

describe('stopSignal', () => {
  it('aborts with the shutdown when the instance stops', () => {
    const stop = new AbortController();
    const halt = stopSignal(stop.signal, () => undefined, 5);
    stop.abort();
    expect(halt.signal.aborted).toBe(true);
    halt.dispose();
  });

  it('aborts, with the reason, once the job has one to stop (a lost Lease, a guard)', async () => {
    const job: { reason?: string } = {};
    const halt = stopSignal(new AbortController().signal, () => job.reason, 5);
    await new Promise(r => setTimeout(r, 20));
    expect(halt.signal.aborted).toBe(false);
    const reason = 'StatefulSet shop/web was scaled up to 3 replicas';
    job.reason = reason;
    await new Promise(r => setTimeout(r, 20));
    expect(halt.signal.aborted).toBe(true);
    expect((halt.signal.reason as Error).message).toBe(reason);
    halt.dispose();
  });
});
