import {
  describeFinalizers,
  describeInUse,
  describeKept,
  formatOrdinals,
} from './keptReasons';
import { KeptPvc } from './types';

const web = { name: 'web', ordinals: { start: 1, end: 4 } };

describe('formatOrdinals', () => {
  it.each([
    [[], ''],
    [[3], '3'],
    [[0, 1, 2], '0–2'],
    [[0, 1, 2, 5, 7, 8], '0–2, 5, 7–8'],
  ])('writes %j as %j', (ordinals, text) => {
    expect(formatOrdinals(ordinals)).toBe(text);
  });
});

describe('describeInUse', () => {
  it('names one ordinal and the ordinals the StatefulSet runs', () => {
    expect(describeInUse({ ordinals: [2] }, web)).toBe(
      'ordinal 2 is one the StatefulSet runs (1–3)',
    );
  });

  it('names several ordinals as ranges', () => {
    expect(describeInUse({ ordinals: [1, 3] }, web)).toBe(
      'ordinals 1, 3 are ones the StatefulSet runs (1–3)',
    );
  });
});

describe('describeKept', () => {
  const claim = (kept: Omit<KeptPvc, 'uid' | 'template'>): KeptPvc => ({
    uid: 'u',
    template: 'data',
    ...kept,
  });

  it.each<[string, KeptPvc, string]>([
    [
      'names every pod that mounts the claim, and which are terminating',
      claim({
        name: 'data-web-5',
        ordinal: 5,
        reason: 'mounted-by-pod',
        pods: [
          { name: 'web-5', terminating: true },
          { name: 'debug-shell', terminating: false },
        ],
      }),
      'mounted by pod web-5 (terminating), debug-shell',
    ],
    [
      'quotes the part of the name that is not an ordinal',
      claim({ name: 'data-web-backup', reason: 'not-an-ordinal' }),
      '"backup" after "data-web-" is not an ordinal of this StatefulSet',
    ],
    [
      'names the finalizers that keep a claim terminating',
      claim({
        name: 'data-web-5',
        ordinal: 5,
        reason: 'terminating',
        finalizers: ['acc.example/backup-hold', 'kubernetes.io/pvc-protection'],
      }),
      'already being deleted, still terminating (held by acc.example/backup-hold, kubernetes.io/pvc-protection)',
    ],
    [
      'says that a paused StatefulSet reattaches its claims when scaled up',
      claim({ name: 'data-web-0', ordinal: 0, reason: 'paused' }),
      'web is scaled to 0 replicas (paused), and scaling it up again reattaches its claims, data and all',
    ],
    [
      "names the autoscaler and the ordinals its maximum reaches, from the StatefulSet's first ordinal",
      claim({
        name: 'data-web-5',
        ordinal: 5,
        reason: 'autoscaler-range',
        autoscaler: { name: 'web-hpa', maxReplicas: 6 },
      }),
      'HorizontalPodAutoscaler web-hpa may scale web up to 6 replicas, which reattaches the claims of ordinals below 7',
    ],
    [
      'says so when the autoscaler has no maximum that is a replica count',
      claim({
        name: 'data-web-5',
        ordinal: 5,
        reason: 'autoscaler-range',
        autoscaler: { name: 'web-hpa' },
      }),
      'HorizontalPodAutoscaler web-hpa targets web with a maxReplicas that is not a replica count, so it could scale it up to any of its claims',
    ],
    [
      'says why the autoscalers could not be read, and what pvc-pruner needs',
      claim({
        name: 'data-web-5',
        ordinal: 5,
        reason: 'autoscalers-unreadable',
        autoscalersError: 'cluster "demo" refused list: 403 Forbidden',
      }),
      'the HorizontalPodAutoscalers of its namespace could not be read (cluster "demo" refused list: 403 Forbidden), so one might scale web up and reattach its claims; pvc-pruner needs list and watch on horizontalpodautoscalers (rbac/pvc-pruner-rbac.yaml)',
    ],
  ])('%s', (_what, kept, text) => {
    expect(describeKept(kept, web)).toBe(text);
  });
});

describe('describeFinalizers', () => {
  it('says what holds a claim, or that nothing does any more', () => {
    expect(describeFinalizers(['acc.example/backup-hold'])).toBe(
      'held by acc.example/backup-hold',
    );
    expect(describeFinalizers([])).toBe(
      'held until the API server finishes its deletion',
    );
  });
});
