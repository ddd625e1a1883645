import { mockServices } from '@backstage/backend-test-utils';
import type { NotificationSendOptions } from '@backstage/plugin-notifications-node';
import {
  AUTO_PRUNE_TOPIC,
  AutoPruneNotifier,
  entityCardLink,
  noticeScope,
} from './AutoPruneNotifier';
import {
  emptyPruneSummary,
  type PruneJob,
} from 'backstage-plugin-pvc-pruner-common';
import type { PlannedClaim, PlannedGroup } from './types';

const claim = (i: number): PlannedClaim => ({
  name: `data-orders-${i}`,
  uid: `u${i}`,
  ordinal: i,
  bytes: 2 ** 30,
  eligibleAt: '2026-12-05T14:00:00.000Z',
  retained: false,
});

const group: PlannedGroup = {
  cluster: 'demo',
  namespace: 'shop',
  statefulSet: 'orders-db',
  through: {
    entity: {
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'Component',
      metadata: { name: 'Orders', namespace: 'Payments' },
    },
    entityRef: 'component:payments/Orders',
    labelSelector: 'app=orders',
  },
  claimants: ['component:payments/Orders'],
  graceMs: 0,
  eligible: [],
  upcoming: [],
  kept: [],
};

function notifierWith(
  send: (n: NotificationSendOptions) => Promise<void>,
  plugins = ['pvc-pruner', 'notifications'],
) {
  const logger = mockServices.logger.mock();
  const notifier = new AutoPruneNotifier({
    notifications: { send },
    systemMetadata: {
      getInstalledPlugins: async () => plugins.map(pluginId => ({ pluginId })),
    },
    logger,
  });
  return { notifier, logger };
}

describe('AutoPruneNotifier', () => {
  it("links to the entity's Kubernetes tab, as the catalog routes it (kind and namespace lowercased)", () => {
    expect(entityCardLink('component:Payments/Orders')).toBe(
      '/catalog/payments/component/Orders/kubernetes',
    );
  });

  it('keeps a scope per StatefulSet and day within the 255 characters the notifications backend stores', () => {
    const long = (c: string) => c.repeat(253);
    const scopeOf = (sts: string) =>
      noticeScope(
        { ...group, cluster: long('c'), statefulSet: sts },
        '2026-12-05T14:00:00.000Z',
      );
    expect(noticeScope(group, '2026-12-05T14:00:00.000Z')).toBe(
      'pvc-pruner:auto-prune:demo/shop/orders-db:2026-12-05',
    );
    expect(scopeOf(long('a')).length).toBeLessThanOrEqual(255);
    expect(scopeOf(long('a'))).toMatch(/:2026-12-05$/);
    expect(scopeOf(long('a'))).not.toBe(scopeOf(long('b')));
  });

  it("tells the claimant's owners, with the topic, the scope and a capped list of the claims", async () => {
    const sent: NotificationSendOptions[] = [];
    const { notifier } = notifierWith(async n => void sent.push(n));
    const upcoming = Array.from({ length: 25 }, (_, i) => claim(i));

    expect(
      await notifier.before(group, upcoming, '2026-12-05T15:00:00.000Z', 's1'),
    ).toBe(true);

    expect(sent).toHaveLength(1);
    expect(sent[0].recipients).toEqual({
      type: 'entity',
      entityRef: 'component:payments/Orders',
    });
    expect(sent[0].payload).toMatchObject({
      title:
        '25 claims of orders-db will be pruned on Dec 5, 2026, 3:00 PM UTC unless you keep them',
      topic: AUTO_PRUNE_TOPIC,
      scope: 's1',
      link: '/catalog/payments/component/Orders/kubernetes',
    });
    expect(sent[0].payload.description).toContain('- data-orders-19 (1.0 GiB)');
    expect(sent[0].payload.description).not.toContain('data-orders-20');
    expect(sent[0].payload.description).toContain('- and 5 more');
  });

  describe('of a StatefulSet several entities claim', () => {
    const shared: PlannedGroup = {
      ...group,
      claimants: ['component:payments/Orders', 'component:default/mallory'],
    };
    const job: PruneJob = {
      id: 'job-1',
      cluster: 'demo',
      namespace: 'shop',
      statefulSet: 'orders-db',
      dryRun: false,
      status: 'succeeded',
      requestedBy: 'plugin:pvc-pruner',
      pvcs: [],
      createdAt: '2026-12-05T14:00:00.000Z',
      summary: {
        ...emptyPruneSummary(),
        deleted: [0, 1].map(i => ({
          name: `data-orders-${i}`,
          uid: `u${i}`,
          snapshot: {
            name: `pvc-pruner-data-orders-${i}`,
            uid: `s${i}`,
            expiresAt: `2026-12-1${i}T14:00:00.000Z`,
          },
        })),
        skipped: [
          { name: 'data-orders-2', uid: 'u2', reason: 'in use by web-0' },
        ],
        bytesReclaimed: 2 * 2 ** 30,
      },
    };

    it('tells each claimant separately, linked to its own card, and names no claim, snapshot or reason', async () => {
      const sent: NotificationSendOptions[] = [];
      const { notifier } = notifierWith(async n => void sent.push(n));

      await notifier.before(shared, [claim(0)], claim(0).eligibleAt, 's1');
      await notifier.dryRunFailed(
        shared,
        [claim(0)],
        'data-orders-0: forbidden',
        's1',
      );
      await notifier.after({
        group: { ...shared, eligible: [claim(0), claim(1)] },
        job,
        deferred: [],
        scope: 's1',
      });

      expect(sent).toHaveLength(6);
      expect(sent.map(n => [n.recipients, n.payload.link])).toEqual(
        [0, 1, 2].flatMap(() => [
          [
            { type: 'entity', entityRef: 'component:payments/Orders' },
            '/catalog/payments/component/Orders/kubernetes',
          ],
          [
            { type: 'entity', entityRef: 'component:default/mallory' },
            '/catalog/default/component/mallory/kubernetes',
          ],
        ]),
      );
      for (const { payload } of sent) {
        expect(payload.description).not.toMatch(/data-orders|forbidden|web-0/);
        expect(payload.description).toContain(
          'This StatefulSet is claimed by component:payments/Orders, component:default/mallory, so this notice names no claim',
        );
      }
      expect(sent[0].payload.description).toContain(
        'will delete 1 claim of StatefulSet shop/orders-db in cluster demo (1.0 GiB), the first on Dec 5, 2026, 2:00 PM UTC',
      );
      expect(sent[4].payload).toMatchObject({
        title: '2 claims of orders-db pruned automatically: 2.0 GiB reclaimed',
        scope: 's1',
      });
      expect(sent[4].payload.description).toContain(
        'Deleted 2 claims, each restorable from its snapshot until at least Dec 10, 2026, 2:00 PM UTC.\nNot deleted: 1 claim.',
      );
    });
  });

  it('says once that owners cannot be told when sending fails, however often it fails', async () => {
    const { notifier, logger } = notifierWith(async () => {
      throw new Error('Failed to send notifications: 404');
    });
    expect(
      await notifier.before(group, [claim(0)], claim(0).eligibleAt, 's'),
    ).toBe(false);
    await notifier.dryRunFailed(group, [claim(0)], 'scaled up', 's');
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toContain(
      "owners can't be told of automatic pruning (Error: Failed to send notifications: 404)",
    );
  });

  it('knows the notifications backend is available only when the system has the notifications plugin', async () => {
    const send = async () => {};
    expect(await notifierWith(send).notifier.available()).toBe(true);
    const without = notifierWith(send, ['pvc-pruner']);
    expect(await without.notifier.available()).toBe(false);
    expect(await without.notifier.available()).toBe(false);
    expect(without.logger.warn).toHaveBeenCalledTimes(1);
  });
});
