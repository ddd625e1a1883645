import { ObjectStore } from '../store';
import { KubeObject } from '../types';
import { now } from './util';

const CACHE_LIMIT = 4096;

/** Shared by every recorder, so two components naming an event in the same millisecond do not collide. */
let sequence = 0;

export interface EventOptions {
  /** The part of the object the event is about, e.g. `spec.containers{web}`. */
  fieldPath?: string;
}

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

  /** `host` is the node a node agent (the kubelet) reports from. */
  constructor(
    private readonly store: ObjectStore,
    private readonly component: string,
    private readonly host?: string,
  ) {}

  normal(
    obj: KubeObject,
    reason: string,
    message: string,
    options: EventOptions = {},
  ) {
    this.record(obj, 'Normal', reason, message, options);
  }

  warning(
    obj: KubeObject,
    reason: string,
    message: string,
    options: EventOptions = {},
  ) {
    this.record(obj, 'Warning', reason, message, options);
  }

  private record(
    obj: KubeObject,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    { fieldPath }: EventOptions,
  ) {
    const namespace = obj.metadata.namespace ?? 'default';
    const id = [obj.metadata.uid, fieldPath, type, reason, message].join(
      '\u0000',
    );
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
        BigInt(Date.now()) * 1000000n + BigInt(sequence++ % 1000000);
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
          ...(fieldPath ? { fieldPath } : {}),
        },
        reason,
        message,
        source: {
          component: this.component,
          ...(this.host ? { host: this.host } : {}),
        },
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: this.component,
        reportingInstance: this.host ?? '',
      });
      this.recent.set(id, { namespace, name });
      if (this.recent.size > CACHE_LIMIT)
        this.recent.delete(this.recent.keys().next().value!);
    } catch {
      // Dropped, as client-go drops events it cannot write.
    }
  }
}
