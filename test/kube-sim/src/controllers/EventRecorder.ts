import { ObjectStore } from '../store';
import { KubeObject } from '../types';
import { now } from './util';

const CACHE_LIMIT = 4096;

/**
 * Writes core/v1 Events the way client-go's recorder does, including its
 * aggregation: a repeat of the same event bumps count and lastTimestamp.
 * Best effort, like the real recorder: failures are dropped.
 */
export class EventRecorder {
  private readonly recent = new Map<
    string,
    { namespace: string; name: string }
  >();
  private sequence = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly component: string,
  ) {}

  normal(obj: KubeObject, reason: string, message: string) {
    this.record(obj, 'Normal', reason, message);
  }

  warning(obj: KubeObject, reason: string, message: string) {
    this.record(obj, 'Warning', reason, message);
  }

  private record(
    obj: KubeObject,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ) {
    const namespace = obj.metadata.namespace ?? 'default';
    const id = `${obj.metadata.uid}\u0000${type}\u0000${reason}\u0000${message}`;
    const at = now();
    try {
      const seen = this.recent.get(id);
      const existing =
        seen && this.store.get('events', seen.namespace, seen.name);
      if (existing) {
        this.store.update('events', {
          ...existing,
          count: (existing.count ?? 1) + 1,
          lastTimestamp: at,
        });
        return;
      }
      // client-go names events <object>.<unix nanoseconds in hex>.
      const nanos =
        BigInt(Date.now()) * 1000000n + BigInt(this.sequence++ % 1000000);
      const name = `${obj.metadata.name}.${nanos.toString(16)}`;
      this.store.create('events', {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace } as KubeObject['metadata'],
        involvedObject: {
          kind: obj.kind,
          namespace: obj.metadata.namespace,
          name: obj.metadata.name,
          uid: obj.metadata.uid,
          apiVersion: obj.apiVersion,
          resourceVersion: obj.metadata.resourceVersion,
        },
        reason,
        message,
        source: { component: this.component },
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: this.component,
        reportingInstance: '',
      });
      this.recent.set(id, { namespace, name });
      if (this.recent.size > CACHE_LIMIT)
        this.recent.delete(this.recent.keys().next().value!);
    } catch {
      // Dropped, as client-go drops events it cannot write.
    }
  }
}
