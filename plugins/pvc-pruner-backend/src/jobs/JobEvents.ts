import { EventEmitter } from 'node:events';
import { PruneEvent } from 'backstage-plugin-pvc-pruner-common';
import { PruneJobStore } from '../database';

/**
 * Appends job events to the database (so any replica can replay them) and
 * tells this process's streams at once, so they need not wait for a poll.
 */
export class JobEvents {
  private readonly emitter = new EventEmitter();

  constructor(private readonly store: PruneJobStore) {
    this.emitter.setMaxListeners(0);
  }

  async append(event: Omit<PruneEvent, 'seq' | 'at'>): Promise<PruneEvent> {
    const stored = await this.store.appendEvent({
      ...event,
      at: new Date().toISOString(),
    });
    this.emitter.emit(event.jobId, stored);
    return stored;
  }

  /** Calls listener for events appended by this process; returns an unsubscribe function. */
  subscribe(jobId: string, listener: (event: PruneEvent) => void): () => void {
    this.emitter.on(jobId, listener);
    return () => this.emitter.off(jobId, listener);
  }
}
