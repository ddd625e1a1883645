/**
 * How the simulated CSI driver answers CreateSnapshot, chosen per snapshot
 * by a test or a scenario: rules added here (first match wins, `times`
 * spends them) come before the annotations of the VolumeSnapshot, then of
 * its VolumeSnapshotClass (constants.ts), then the controller's default.
 */
export interface SnapshotBehaviourRule {
  /** Unset fields match every snapshot. */
  namespace?: string;
  /** The VolumeSnapshot's name. */
  snapshot?: string;
  /** The source claim's name. */
  claim?: string;
  snapshotClass?: string;
  /** Simulated seconds from the cut until readyToUse (0: ready at once). */
  readyAfterSeconds?: number;
  /** The driver fails with this message: status.error on the content and the snapshot, never ready. */
  error?: string;
  /** Applies to this many snapshots, then it is spent. */
  times?: number;
}

export interface SnapshotOutcome {
  readyAfterSeconds?: number;
  error?: string;
}

export interface SnapshotSubject {
  namespace: string;
  snapshot: string;
  claim: string;
  snapshotClass: string;
}

export class SnapshotBehaviours {
  private rules: Array<SnapshotBehaviourRule & { id: number }> = [];
  private nextId = 1;

  add(rule: SnapshotBehaviourRule): number {
    const ready = rule.readyAfterSeconds;
    if (ready !== undefined && !(Number.isFinite(ready) && ready >= 0))
      throw new Error('readyAfterSeconds must be a non-negative number');
    for (const field of [
      'namespace',
      'snapshot',
      'claim',
      'snapshotClass',
      'error',
    ] as const)
      if (rule[field] !== undefined && typeof rule[field] !== 'string')
        throw new Error(`${field} must be a string`);
    if (
      rule.times !== undefined &&
      !(Number.isInteger(rule.times) && rule.times >= 0)
    )
      throw new Error('times must be a non-negative integer');
    const id = this.nextId++;
    this.rules.push({ ...rule, id });
    return id;
  }

  remove(id: number) {
    this.rules = this.rules.filter(r => r.id !== id);
  }

  clear() {
    this.rules = [];
  }

  list(): SnapshotBehaviourRule[] {
    return this.rules.map(r => ({ ...r }));
  }

  /** The first matching rule's outcome (spending it), if any. */
  take(subject: SnapshotSubject): SnapshotOutcome | undefined {
    for (const rule of this.rules) {
      if (rule.namespace !== undefined && rule.namespace !== subject.namespace)
        continue;
      if (rule.snapshot !== undefined && rule.snapshot !== subject.snapshot)
        continue;
      if (rule.claim !== undefined && rule.claim !== subject.claim) continue;
      if (
        rule.snapshotClass !== undefined &&
        rule.snapshotClass !== subject.snapshotClass
      )
        continue;
      if (rule.times !== undefined) {
        if (rule.times <= 0) continue;
        rule.times -= 1;
      }
      return { readyAfterSeconds: rule.readyAfterSeconds, error: rule.error };
    }
    return undefined;
  }
}
