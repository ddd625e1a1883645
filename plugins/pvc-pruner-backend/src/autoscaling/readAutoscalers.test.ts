import { horizontalPodAutoscaler, KubeSim } from 'kube-sim';
import { startShopSimulator } from '../__testUtils__/shopSimulator';
import { KubeGateway } from '../kubernetes';
import { readAutoscalers } from './readAutoscalers';

let sim: KubeSim;
let gateway: KubeGateway;

beforeAll(async () => {
  ({ sim, gateway } = await startShopSimulator());
  sim.store.create(
    'autoscaling/horizontalpodautoscalers',
    horizontalPodAutoscaler('web-hpa', 'web', { maxReplicas: 6 }, 'shop'),
  );
});

afterAll(async () => {
  await sim.close();
});

afterEach(() => sim.clearFaults());

describe('readAutoscalers', () => {
  it("lists the namespace's HPAs, trimmed to what the orphan rule reads", async () => {
    const read = await readAutoscalers(gateway, 'shop');
    expect(read).toEqual([
      {
        metadata: expect.objectContaining({
          name: 'web-hpa',
          namespace: 'shop',
        }),
        spec: {
          scaleTargetRef: {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            name: 'web',
          },
          minReplicas: 1,
          maxReplicas: 6,
        },
      },
    ]);
    expect(
      sim
        .requests()
        .some(
          r =>
            r.path ===
            '/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers',
        ),
    ).toBe(true);
  });

  it.each([
    [403, 'an RBAC binding from before pvc-pruner read HPAs'],
    [404, 'a cluster that does not serve autoscaling/v2'],
  ])(
    'says why instead of failing on a %i (%s), so claims are kept',
    async status => {
      sim.addFault({
        verb: 'list',
        resource: 'horizontalpodautoscalers',
        status,
      });

      expect(await readAutoscalers(gateway, 'shop')).toEqual({
        unreadable: expect.stringMatching(
          new RegExp(
            `^cluster "demo" refused list horizontalpodautoscalers in shop: ${status}`,
          ),
        ),
      });
    },
  );

  it('fails on any other failure, as a failed claim list fails the scan', async () => {
    sim.addFault({
      verb: 'list',
      resource: 'horizontalpodautoscalers',
      status: 503,
    });

    await expect(readAutoscalers(gateway, 'shop')).rejects.toThrow(/503/);
  });
});
