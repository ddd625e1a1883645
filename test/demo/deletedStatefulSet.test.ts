import { KubeSim, startKubeSim } from 'kube-sim';
import {
  DELETED_STATEFULSET,
  leaveDeletedStatefulSet,
  PluginReads,
} from './deletedStatefulSet';

jest.setTimeout(60_000);

const { namespace, name, entityRef } = DELETED_STATEFULSET;
const CLAIMS = [`data-${name}-0`, `data-${name}-1`];

describe('the demo’s deleted StatefulSet', () => {
  let sim: KubeSim;

  beforeEach(async () => {
    sim = await startKubeSim({ scenario: 'demo', timeFactor: 0.02 });
  });
  afterEach(() => sim.close());

  it('is seen by pvc-pruner while it runs, then deleted, leaving its claims, before the demo is ready', async () => {
    const calls: string[] = [];
    /** What a scan saw: the StatefulSet's uid and its claims' uids, as lineage records them. */
    let seen: { uid: string; claims: string[] } | undefined;
    const plugin: PluginReads = {
      scan: async ref => {
        calls.push(`scan ${ref}`);
        const sts = sim.store.get('apps/statefulsets', namespace, name);
        seen = sts && {
          uid: sts.metadata.uid!,
          claims: CLAIMS.map(
            c =>
              sim.store.get('persistentvolumeclaims', namespace, c)!.metadata
                .uid!,
          ),
        };
      },
      leftBehind: async ref => {
        calls.push(`left-behind ${ref}`);
        // Left behind as the plugin judges it: the seen StatefulSet is gone, its claims are not.
        const gone = !sim.store.get('apps/statefulsets', namespace, name);
        const kept = CLAIMS.every(
          (c, i) =>
            sim.store.get('persistentvolumeclaims', namespace, c)?.metadata
              .uid === seen?.claims[i],
        );
        return seen && gone && kept ? [name] : [];
      },
    };

    await leaveDeletedStatefulSet(sim, plugin);

    expect(seen?.uid).toEqual(expect.any(String));
    expect(calls[0]).toBe(`scan ${entityRef}`);
    expect(calls.at(-1)).toBe(`left-behind ${entityRef}`);
    expect(sim.store.get('apps/statefulsets', namespace, name)).toBeUndefined();
    expect(
      sim.store
        .list('pods', { namespace })
        .items.filter(p => p.metadata.name.startsWith(`${name}-`)),
    ).toEqual([]);
    CLAIMS.forEach(c =>
      expect(
        sim.store.get('persistentvolumeclaims', namespace, c),
      ).toBeDefined(),
    );
  });
});
