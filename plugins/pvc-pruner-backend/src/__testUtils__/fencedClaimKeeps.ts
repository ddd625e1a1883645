import type { ClaimKeep } from 'backstage-plugin-pvc-pruner-common';
import type { ClaimKeeps } from '../automation';

/**
 * Card keeps in memory, fenced as ClaimKeeps promises: `keep` stores, then
 * withdraws and is refused if the claim is marked as being deleted.
 * `beforeFence` runs before each of the job's fence calls (markDeleting or
 * keptNow), named, so a test can land a keep at that instant.
 */
export class FencedClaimKeeps implements ClaimKeeps {
  readonly keeps = new Map<string, ClaimKeep>();
  readonly marks = new Map<string, string>();
  /** Keeps acknowledged to the person who asked: none of these may be deleted. */
  readonly acknowledged = new Set<string>();
  readonly calls: string[] = [];
  beforeFence?: (call: 'markDeleting' | 'keptNow', uid: string) => void;
  onKeepsOf?: () => void;

  keep(uid: string, keep: Partial<ClaimKeep> = {}): 'kept' | 'refused' {
    this.keeps.set(uid, {
      source: 'card',
      keptBy: 'user:default/alice',
      keptAt: '2026-12-03T09:00:00Z',
      reason: 'still needed for the migration',
      ...keep,
    });
    if (this.marks.has(uid)) {
      this.keeps.delete(uid);
      return 'refused';
    }
    this.acknowledged.add(uid);
    return 'kept';
  }

  async keepsOf(_cluster: string, uids: readonly string[]) {
    this.calls.push('keepsOf');
    this.onKeepsOf?.();
    return new Map(
      uids.flatMap(uid => {
        const keep = this.keeps.get(uid);
        return keep ? [[uid, keep] as const] : [];
      }),
    );
  }

  async markDeleting(_cluster: string, uid: string, jobId: string) {
    this.beforeFence?.('markDeleting', uid);
    this.calls.push('markDeleting');
    this.marks.set(uid, jobId);
  }

  async unmarkDeleting(_cluster: string, uid: string, jobId: string) {
    if (this.marks.get(uid) === jobId) this.marks.delete(uid);
  }

  async keptNow(_cluster: string, uid: string) {
    this.beforeFence?.('keptNow', uid);
    this.calls.push('keptNow');
    return this.keeps.get(uid);
  }
}
