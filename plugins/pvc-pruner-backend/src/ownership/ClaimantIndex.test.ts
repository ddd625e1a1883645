import type { V1StatefulSet } from '@kubernetes/client-node';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { ClaimantIndex, MAX_CLAIMANTS } from './ClaimantIndex';
import { workloadEntityOf } from './WorkloadEntity';

function sts(
  name: string,
  namespace: string,
  labels: Record<string, string>,
): V1StatefulSet {
  return { metadata: { name, namespace, labels } };
}

function entity(name: string, annotations: Record<string, string>) {
  return workloadEntityOf(componentEntity(name, { annotations }))!;
}

const LEDGER = sts('ledger-db', 'payments', {
  'backstage.io/kubernetes-id': 'ledger',
  app: 'ledger',
});

describe('ClaimantIndex', () => {
  it('finds every entity whose annotations map it to the StatefulSet: by id, by selector, a catch-all, scoped by namespace and cluster', () => {
    const index = new ClaimantIndex([
      entity('ledger', { 'backstage.io/kubernetes-id': 'ledger' }),
      entity('borrowed', { 'backstage.io/kubernetes-id': 'ledger' }),
      entity('catch-all', {
        'backstage.io/kubernetes-label-selector': '!nonexistent',
      }),
      entity('by-app', {
        'backstage.io/kubernetes-label-selector': 'app in (ledger, billing)',
      }),
      entity('other-namespace', {
        'backstage.io/kubernetes-id': 'ledger',
        'backstage.io/kubernetes-namespace': 'shop',
      }),
      entity('other-cluster', {
        'backstage.io/kubernetes-id': 'ledger',
        'backstage.io/kubernetes-cluster': 'prod',
      }),
      entity('same-cluster', {
        'backstage.io/kubernetes-id': 'ledger',
        'backstage.io/kubernetes-cluster': 'demo',
      }),
      entity('unrelated', { 'backstage.io/kubernetes-id': 'orders' }),
    ]);

    expect(index.claimantsOf('demo', LEDGER).map(e => e.entityRef)).toEqual([
      'component:default/borrowed',
      'component:default/by-app',
      'component:default/catch-all',
      'component:default/ledger',
      'component:default/same-cluster',
    ]);
  });

  it('takes an entity whose selector it cannot read to claim every StatefulSet in its scope, and says so once', () => {
    const unreadable: string[] = [];
    const index = new ClaimantIndex(
      [
        entity('odd', {
          'backstage.io/kubernetes-label-selector': 'tier > 3',
          'backstage.io/kubernetes-namespace': 'payments',
        }),
      ],
      e => unreadable.push(e.entityRef),
    );

    expect(index.claimantsOf('demo', LEDGER).map(e => e.entityRef)).toEqual([
      'component:default/odd',
    ]);
    expect(
      index.claimantsOf('demo', sts('web', 'shop', { app: 'web' })),
    ).toEqual([]);
    expect(unreadable).toEqual(['component:default/odd']);
  });

  it('matches only a StatefulSet’s own labels, never inherited properties', () => {
    const index = new ClaimantIndex([
      entity('proto', {
        'backstage.io/kubernetes-label-selector': 'constructor',
      }),
    ]);
    expect(index.claimantsOf('demo', sts('web', 'shop', {}))).toEqual([]);
  });

  it('stops counting past MAX_CLAIMANTS, and tries keyed selectors only on StatefulSets with their key', () => {
    const many = Array.from({ length: 100 }, (_, i) =>
      entity(`catch-all-${i}`, {
        'backstage.io/kubernetes-label-selector': `!none-${i}`,
      }),
    );
    const keyed = entity('keyed', {
      'backstage.io/kubernetes-label-selector': 'tier in (db),app',
    });
    const index = new ClaimantIndex([keyed, ...many]);

    expect(index.claimantsOf('demo', LEDGER)).toHaveLength(MAX_CLAIMANTS + 1);
    expect(
      new ClaimantIndex([keyed])
        .claimantsOf('demo', sts('x', 'shop', { app: 'a', tier: 'db' }))
        .map(e => e.entityRef),
    ).toEqual(['component:default/keyed']);
    expect(
      new ClaimantIndex([keyed]).claimantsOf(
        'demo',
        sts('x', 'shop', { tier: 'db' }),
      ),
    ).toEqual([]);
  });
});
