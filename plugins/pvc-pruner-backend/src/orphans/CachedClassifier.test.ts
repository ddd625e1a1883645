import { mockServices } from '@backstage/backend-test-utils';
import { pvc, statefulSet } from 'kube-sim';
import { ClusterCache, ClusterConnection, KubeGateway } from '../kubernetes';
import { CachedClassifier } from './CachedClassifier';
import { WATCH_CACHE_TRIMMERS } from './orphanRule';

/** A cache of a cluster named "same", filled by hand (never started), holding `claims` in namespace shop. */
function cacheHolding(claims: string[]) {
  const gateway = new KubeGateway(
    'same',
    new ClusterConnection(
      {
        name: 'same',
        server: 'https://unused.example.com',
        skipTLSVerify: false,
      },
      async () => ({ type: 'anonymous' }),
      true,
    ),
    1000,
  );
  const cache = new ClusterCache(
    gateway,
    WATCH_CACHE_TRIMMERS,
    { minBackoffMs: 1, maxBackoffMs: 1, minWatchMs: 0 },
    mockServices.logger.mock(),
  );
  cache.claims.replace(
    claims.map(name =>
      WATCH_CACHE_TRIMMERS.claim(pvc(name, {}, 'shop') as any),
    ),
  );
  cache.pods.replace([]);
  cache.volumes.replace([]);
  return cache;
}

const orphansIn = (classifier: CachedClassifier, cache: ClusterCache) =>
  classifier
    .classify(cache, statefulSet('db', { replicas: 1 }, 'shop') as any)
    .orphans.map(o => o.name);

describe('CachedClassifier', () => {
  it('never answers one cache from what it derived from another cache of the same cluster name', () => {
    const classifier = new CachedClassifier('keep');
    // Filled the same way, so their namespaces' generations are the same numbers.
    const before = cacheHolding(['data-db-0', 'data-db-1']);
    const after = cacheHolding(['data-db-0', 'data-db-2']);

    expect(orphansIn(classifier, before)).toEqual(['data-db-1']);
    expect(orphansIn(classifier, after)).toEqual(['data-db-2']);
  });
});

describe('CachedClassifier and the namespace’s other StatefulSets', () => {
  it('makes a StatefulSet’s report again when another StatefulSet of its namespace appears whose template also names its claims', () => {
    const cache = cacheHolding(['data-ledger-db-1']);
    const ledger = WATCH_CACHE_TRIMMERS.statefulSet(
      statefulSet('ledger-db', { replicas: 1 }, 'shop') as any,
    );
    cache.statefulSets.replace([ledger]);
    const classifier = new CachedClassifier('keep');
    expect(classifier.classify(cache, ledger).orphans.map(o => o.name)).toEqual(
      ['data-ledger-db-1'],
    );

    const db = statefulSet('db', { replicas: 0 }, 'shop') as any;
    db.spec.volumeClaimTemplates[0].metadata.name = 'data-ledger';
    cache.statefulSets.upsert(WATCH_CACHE_TRIMMERS.statefulSet(db));

    const again = classifier.classify(cache, ledger);
    expect(again.orphans).toEqual([]);
    expect(again.kept.map(k => k.reason)).toEqual(['name-also-fits']);
  });
});

describe('CachedClassifier and generic ephemeral volumes', () => {
  it('keeps a claim a pod of the cache references through a generic ephemeral volume (named <pod>-<volume>)', () => {
    const cache = cacheHolding(['data-db-1']);
    // Pod "data-db" with ephemeral volume "1": its claim is data-db-1, which also reads as ordinal 1 of db.
    cache.pods.replace([
      WATCH_CACHE_TRIMMERS.pod({
        metadata: { name: 'data-db', namespace: 'shop' },
        spec: {
          containers: [],
          volumes: [
            {
              name: '1',
              ephemeral: { volumeClaimTemplate: { spec: {} } },
            },
          ],
        },
      }),
    ]);
    const report = new CachedClassifier('keep').classify(
      cache,
      statefulSet('db', { replicas: 1 }, 'shop') as any,
    );
    expect(report.orphans).toEqual([]);
    expect(report.kept.map(k => [k.name, k.reason])).toEqual([
      ['data-db-1', 'mounted-by-pod'],
    ]);
  });
});
