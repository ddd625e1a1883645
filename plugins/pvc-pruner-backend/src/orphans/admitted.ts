import type { V1StatefulSet } from '@kubernetes/client-node';
import type {
  ClusterOrphans,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';

/** A cluster's section, with the StatefulSets its reports are of, as their cluster has them. */
export interface Scanned {
  section: ClusterOrphans;
  objects: V1StatefulSet[];
}

/** What the caller may see of one StatefulSet, and who claims it. */
export interface Admission {
  claimants: string[];
  /** Claimants the caller may not read: then it is withheld. */
  refused: string[];
  /** Claimed by too many entities: withheld from everyone. */
  crowded: boolean;
  /** Basic permissions a prune of it needs beyond the claimants'. */
  pruneNeeds: string[];
}

/** Whether each StatefulSet found is shown, and who else claims it (see OrphanFinder.findForEntity). */
export type Admit = (
  found: Array<{ cluster: string; statefulSet: V1StatefulSet }>,
) => Promise<Admission[]>;

/** Refusals name at most this many claimants. */
const REFUSED_NAMED = 20;

/**
 * The sections with only what `admit` lets the caller see of the entity's
 * StatefulSets; the rest counted in each cluster's `withheld`. Reports and
 * objects are matched by namespace and name, which a cluster keeps unique
 * (a uid is only what the API server says it is).
 */
export async function admitted(
  scanned: Scanned[],
  entityRef: string,
  admit: Admit,
): Promise<ClusterOrphans[]> {
  const found = scanned.flatMap(({ section, objects }) => {
    if (!section.ok) return [];
    const byName = new Map(
      objects.map(o => [`${o.metadata?.namespace}/${o.metadata?.name}`, o]),
    );
    return section.statefulSets.flatMap(report => {
      const statefulSet = byName.get(`${report.namespace}/${report.name}`);
      return statefulSet
        ? [{ cluster: section.cluster, report, statefulSet }]
        : [];
    });
  });
  const verdicts = await admit(found);
  const shown = new Map<string, StatefulSetOrphans[]>();
  const withheld = new Map<
    string,
    { count: number; overClaimed: number; refused: Set<string> }
  >();
  found.forEach(({ cluster, report }, i) => {
    const { claimants, refused, crowded, pruneNeeds } = verdicts[i];
    if (refused.length > 0) {
      const w = withheld.get(cluster) ?? {
        count: 0,
        overClaimed: 0,
        refused: new Set(),
      };
      w.count++;
      if (crowded) w.overClaimed++;
      else refused.forEach(ref => w.refused.add(ref));
      withheld.set(cluster, w);
      return;
    }
    const sharedWith = claimants.filter(ref => ref !== entityRef);
    const list = shown.get(cluster) ?? [];
    // Reports are shared between requests (and their JSON kept): copied only when they need more.
    list.push(
      sharedWith.length > 0 || pruneNeeds.length > 0
        ? {
            ...report,
            ...(sharedWith.length > 0 ? { sharedWith } : {}),
            ...(pruneNeeds.length > 0 ? { pruneNeeds } : {}),
          }
        : report,
    );
    shown.set(cluster, list);
  });
  return scanned.map(({ section }) => {
    if (!section.ok) return section;
    const w = withheld.get(section.cluster);
    return {
      ...section,
      statefulSets: shown.get(section.cluster) ?? [],
      ...(w
        ? {
            withheld: {
              statefulSets: w.count,
              refusedClaimants: [...w.refused].sort().slice(0, REFUSED_NAMED),
              ...(w.overClaimed ? { overClaimed: w.overClaimed } : {}),
            },
          }
        : {}),
    };
  });
}
