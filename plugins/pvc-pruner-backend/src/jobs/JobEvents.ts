import { EventEmitter } from 'node:events';
import { PruneEvent } from 'backstage-plugin-pvc-pruner-common';
import { PruneJobPatch, PruneJobStore } from '../database';

const RETRY_DELAY_MS = 200;

/**
 * Appends job events to the database (so any replica can replay them) and
 * tells this process's streams at once, so they need not wait for a poll.
 */
export class JobEvents {
  private readonly emitter = new EventEmitter();

  constructor(private readonly store: PruneJobStore) {
    this.emitter.setMaxListeners(0);
  }

  /**
   * Appends an event, trying once more after a failed write: a log line lost
   * to a passing database error would leave a claim's outcome unsaid.
   */
  async append(event: Omit<PruneEvent, 'seq' | 'at'>): Promise<PruneEvent> {
    const write = () =>
      this.store.appendEvent({ ...event, at: new Date().toISOString() });
    const stored = await write().catch(async () => {
      await new Promise(resolve => setTimeout(resolve, RETRY_DELAY_MS));
      return write();
    });
    this.emitter.emit(event.jobId, stored);
    return stored;
  }

  /** Ends a job: its final fields and its last event, written together (see `PruneJobStore.finishJob`). */
  async finish(
    jobId: string,
    patch: PruneJobPatch,
    lastEvent: Omit<PruneEvent, 'seq' | 'at' | 'jobId'>,
  ): Promise<PruneEvent> {
    const stored = await this.store.finishJob(jobId, patch, {
      ...lastEvent,
      at: new Date().toISOString(),
    });
    this.emitter.emit(jobId, stored);
    return stored;
  }

  /** Calls listener for events appended by this process; returns an unsubscribe function. */
  subscribe(jobId: string, listener: (event: PruneEvent) => void): () => void {
    this.emitter.on(jobId, listener);
    return () => this.emitter.off(jobId, listener);
  }
}
