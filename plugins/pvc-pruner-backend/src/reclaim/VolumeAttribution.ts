import { type ClaimLineageStore, unverifiedClaimants } from '../lineage';
import type { WorkloadCatalog } from '../ownership';
import { MAX_CLAIMANTS } from '../ownership/ClaimantIndex';

/** What a Released volume's claim belonged to, by its recorded lineage. */
export interface Attribution {
  statefulSet?: { name: string; uid: string };
  /** The entities recorded as claiming that StatefulSet, sorted; empty when none (or no lineage). */
  claimants: string[];
  /** The claimants whose recorded entity is gone from the catalog or was re-created: their refs give no right. */
  unverified: string[];
  /** More claimants than were kept: whose the volume is cannot be known, so nobody may act on it. */
  crowded: boolean;
}

/** A volume no lineage traces: nobody's, as far as pvc-pruner knows. */
const UNTRACED: Attribution = { claimants: [], unverified: [], crowded: false };

/**
 * Traces Released volumes, by the uid of the claim their claimRef names, to
 * the StatefulSet that claim belonged to and the entities that claimed it,
 * as the lineage recorded them while the claim existed.
 */
export class VolumeAttribution {
  constructor(
    private readonly lineage: Pick<ClaimLineageStore, 'lineageOf'>,
    /** Today's catalog, against which each recorded claimant's uid is checked. */
    private readonly workloads: Pick<WorkloadCatalog, 'warm' | 'fresh'>,
  ) {}

  /**
   * By claim uid; a claim without lineage is untraced. `fresh` checks the
   * uids against a catalog read made now, as a write is authorized on (the
   * warm read may not yet have an entity registered again under a ref).
   */
  async of(
    cluster: string,
    claimUids: string[],
    options: { fresh?: boolean } = {},
  ): Promise<Map<string, Attribution>> {
    const [found, index] = await Promise.all([
      this.lineage.lineageOf(cluster, claimUids),
      options.fresh ? this.workloads.fresh() : this.workloads.warm(),
    ]);
    return new Map(
      claimUids.map(uid => {
        const l = found.get(uid);
        if (!l) return [uid, UNTRACED];
        const claimants = [...l.claimants].sort();
        return [
          uid,
          {
            statefulSet: l.statefulSet,
            claimants,
            unverified: unverifiedClaimants(l, index).sort(),
            crowded: l.claimantsCrowded || claimants.length > MAX_CLAIMANTS,
          },
        ];
      }),
    );
  }
}
