/*
 * The demo's deleted StatefulSet: before the demo says it is ready, cart's
 * promotions-db (scenarios/demo-deleted.yaml, in the checkout team's
 * namespace) is created, seen by pvc-pruner (a scan of cart records its
 * claims' lineage, as any scan does), and deleted as `kubectl delete sts`
 * deletes it: its pods go, its claims stay. Nothing is written to
 * pvc-pruner's database but what the plugin itself records; the demo waits
 * until cart's card lists the claims under "left by StatefulSet
 * promotions-db, deleted".
 */
import { join } from 'node:path';
import { KubeObject, KubeSim, loadScenario } from 'kube-sim';
import { ROOT } from './demoRun';

export const DELETED_STATEFULSET = {
  namespace: 'shop',
  name: 'promotions-db',
  entityRef: 'component:default/cart',
};

/** What the demo asks of pvc-pruner: a scan of the entity, and the deleted StatefulSets its card lists. */
export interface PluginReads {
  scan(entityRef: string): Promise<void>;
  leftBehind(entityRef: string): Promise<string[]>;
}

/** pvc-pruner's HTTP API, as the guest (their Backstage token). */
export function pluginOverHttp(backendUrl: string, token: string): PluginReads {
  const get = async (path: string) => {
    const res = await fetch(`${backendUrl}/api/pvc-pruner${path}`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(30_000),
    });
    if (!res.ok) throw new Error(`${path} answered ${res.status}`);
    return res.json();
  };
  return {
    scan: async entityRef => {
      await get(`/v1/orphans?${new URLSearchParams({ entityRef })}`);
    },
    leftBehind: async entityRef => {
      const body = (await get(
        `/v1/left-behind?${new URLSearchParams({ entityRef })}`,
      )) as {
        clusters: Array<{
          ok: boolean;
          groups?: Array<{ statefulSet: { name: string } }>;
        }>;
      };
      return body.clusters.flatMap(c =>
        (c.groups ?? []).map(g => g.statefulSet.name),
      );
    },
  };
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

async function until(what: string, check: () => Promise<boolean> | boolean) {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function statefulSetObject(): KubeObject {
  const [sts] = loadScenario(
    join(ROOT, 'test/kube-sim/scenarios/demo-deleted.yaml'),
  );
  return sts;
}

/**
 * Creates promotions-db, waits until its pods run on bound claims, has
 * pvc-pruner scan its entity (which records the claims' lineage), deletes
 * it, waits until its pods are gone, and then until the entity's card lists
 * its claims as left behind.
 */
export async function leaveDeletedStatefulSet(
  sim: Pick<KubeSim, 'store'>,
  plugin: PluginReads,
): Promise<void> {
  const { namespace, name, entityRef } = DELETED_STATEFULSET;
  const sts = statefulSetObject();
  const replicas = sts.spec.replicas as number;
  if (!sim.store.get('apps/statefulsets', namespace, name))
    sim.store.create('apps/statefulsets', structuredClone(sts));
  const pods = () =>
    sim.store
      .list('pods', { namespace })
      .items.filter(p => p.metadata.name.startsWith(`${name}-`));
  await until(`${name}'s pods to run`, () => {
    const running = pods().filter(p => p.status?.phase === 'Running');
    const claims = sim.store
      .list('persistentvolumeclaims', { namespace })
      .items.filter(c => c.metadata.name.startsWith(`data-${name}-`));
    return (
      running.length === replicas &&
      claims.length === replicas &&
      claims.every(c => c.status?.phase === 'Bound')
    );
  });
  await plugin.scan(entityRef);
  sim.store.delete('apps/statefulsets', namespace, name);
  await until(`${name}'s pods to be gone`, () => pods().length === 0);
  await until(`${entityRef}'s card to list the claims ${name} left`, async () =>
    (
      await plugin.leftBehind(entityRef).catch((): string[] => [])
    ).includes(name),
  );
}
