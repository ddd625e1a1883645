import { mockServices } from '@backstage/backend-test-utils';
import { ServiceUnavailableError } from '@backstage/errors';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { WorkloadCatalog } from './WorkloadCatalog';

function setUp() {
  const catalog = catalogServiceMock.mock({
    getEntities: async () => ({ items: [componentEntity('orders')] }),
  });
  let now = 0;
  const workloads = new WorkloadCatalog(
    { catalog, auth: mockServices.auth(), logger: mockServices.logger.mock() },
    { maxAgeMs: 10_000, maxStaleMs: 60_000 },
    () => now,
  );
  return {
    catalog,
    workloads,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const refs = async (
  index: Promise<{ entities: readonly { entityRef: string }[] }>,
) => (await index).entities.map(e => e.entityRef);

describe('WorkloadCatalog', () => {
  it('reads the whole catalog with its own credentials, asking only for what locates workloads and their owners', async () => {
    const { catalog, workloads } = setUp();

    expect(await refs(workloads.warm())).toEqual(['component:default/orders']);
    expect(catalog.getEntities).toHaveBeenCalledWith(
      expect.objectContaining({
        fields: expect.arrayContaining(['metadata.annotations', 'spec.owner']),
      }),
      {
        credentials: expect.objectContaining({
          principal: expect.objectContaining({ type: 'service' }),
        }),
      },
    );
  });

  it('keeps a read warm: reused while young, refreshed in the background once older, waited for once too old', async () => {
    const { catalog, workloads, advance } = setUp();
    await workloads.warm();
    advance(5_000);
    await workloads.warm();
    expect(catalog.getEntities).toHaveBeenCalledTimes(1);

    advance(10_000);
    catalog.getEntities.mockResolvedValueOnce({
      items: [componentEntity('orders'), componentEntity('cart')],
    });
    // Older than maxAgeMs: answered from the last read, refreshed meanwhile.
    expect(await refs(workloads.warm())).toEqual(['component:default/orders']);
    expect(catalog.getEntities).toHaveBeenCalledTimes(2);
    await new Promise(resolve => setImmediate(resolve));
    expect(await refs(workloads.warm())).toHaveLength(2);

    advance(61_000);
    catalog.getEntities.mockResolvedValueOnce({ items: [] });
    // Older than maxStaleMs: not used at all.
    expect(await refs(workloads.warm())).toEqual([]);
  });

  it('reads afresh for a job, whatever it has', async () => {
    const { catalog, workloads } = setUp();
    await workloads.warm();
    await workloads.fresh();
    expect(catalog.getEntities).toHaveBeenCalledTimes(2);
  });

  it('fails closed with a 503 naming the catalog when it cannot read it and has nothing recent', async () => {
    const { catalog, workloads } = setUp();
    catalog.getEntities.mockRejectedValueOnce(new Error('catalog is down'));
    const read = workloads.warm();
    await expect(read).rejects.toThrow(ServiceUnavailableError);
    await expect(read).rejects.toThrow(
      'pvc-pruner could not read the catalog to find which entities claim each StatefulSet: catalog is down',
    );
  });
});
