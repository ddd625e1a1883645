import { randomBytes } from 'node:crypto';
import {
  ANN_DATA_ORIGIN,
  ANN_READY_AFTER_SECONDS,
  ANN_SNAPSHOT_BEING_DELETED,
  ANN_SNAPSHOT_ERROR,
  ANN_SOURCE_CLAIM,
  ANN_SOURCE_CLAIM_UID,
  ANN_SOURCE_VOLUME,
  CONTENT_BOUND_PROTECTION,
  CONTENTS,
  DEFAULT_SNAPSHOT_CLASS_ANNOTATION,
  PVC_AS_SOURCE_PROTECTION,
  SNAPSHOT_AS_SOURCE_PROTECTION,
  SNAPSHOT_BOUND_PROTECTION,
  SNAPSHOT_CLASSES,
  SNAPSHOT_GROUP,
  SNAPSHOTS,
} from '../snapshots/constants';
import {
  SnapshotBehaviours,
  SnapshotOutcome,
} from '../snapshots/SnapshotBehaviours';
import { KubeObject, StoreEvent } from '../types';
import { Controller, ControllerContext, keyOf, splitKey } from './Controller';
import { EventRecorder } from './EventRecorder';
import {
  hasFinalizer,
  now,
  parseQuantity,
  removeFinalizer,
  tolerate,
} from './util';

const CLAIMS = 'persistentvolumeclaims';
const VOLUMES = 'persistentvolumes';
const CONTENT_KEY = 'content:';

/** A byte count as resource.NewQuantity(n, BinarySI) prints it: 20Gi, 1536. */
export function binaryQuantity(bytes: number): string {
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let value = bytes;
  let i = 0;
  while (i < suffixes.length - 1 && value !== 0 && value % 1024 === 0) {
    value /= 1024;
    i += 1;
  }
  return `${value}${suffixes[i]}`;
}

/** A claim being restored from a snapshot names it in dataSource (or dataSourceRef). */
export function snapshotSourceOf(claim: KubeObject): string | undefined {
  const source = claim.spec?.dataSourceRef ?? claim.spec?.dataSource;
  return source?.kind === 'VolumeSnapshot' &&
    source?.apiGroup === SNAPSHOT_GROUP &&
    typeof source.name === 'string' &&
    !source.namespace
    ? source.name
    : undefined;
}

/** Raised while a snapshot cannot go on; recorded as its status.error and an event. */
class SnapshotProblem extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
  }
}

/**
 * kubernetes-csi's snapshot-controller and a CSI driver's csi-snapshotter
 * sidecar in one. For a VolumeSnapshot of a claim: the class (its own, or
 * the one default class of the volume's driver), the finalizer
 * pvc-as-source-protection on the claim, a VolumeSnapshotContent
 * `snapcontent-<uid>` bound both ways; the driver cuts the snapshot at once
 * (creationTime, restoreSize: the volume's capacity) and reports it ready
 * after the delay SnapshotBehaviours or the annotations choose, or fails
 * with status.error. Once ready, the claim's finalizer goes. Deleting a
 * snapshot deletes its content when the policy is Delete and keeps it with
 * Retain; a snapshot whose content vanished is no longer ready.
 */
export class SnapshotController extends Controller {
  readonly name = 'snapshot-controller';
  private readonly snapshotsByClaim = this.index(SNAPSHOTS, s => {
    const claim = s.spec?.source?.persistentVolumeClaimName;
    return claim ? [`${s.metadata.namespace}/${claim}`] : [];
  });
  private readonly events = new EventRecorder(
    this.ctx.store,
    'snapshot-controller',
  );
  /** What the driver decided for each content (by uid), once. */
  private readonly outcomes = new Map<string, SnapshotOutcome>();

  constructor(
    ctx: ControllerContext,
    private readonly behaviours: SnapshotBehaviours,
    private readonly readySeconds: number,
  ) {
    super(ctx);
  }

  protected initialKeys() {
    return [
      ...this.ctx.store.list(SNAPSHOTS).items.map(keyOf),
      ...this.ctx.store
        .list(CONTENTS)
        .items.map(c => CONTENT_KEY + c.metadata.name),
    ];
  }

  protected keysFor(event: StoreEvent): string[] {
    const obj = event.object;
    switch (event.resource) {
      case SNAPSHOTS: {
        const keys = [keyOf(obj)];
        const content = obj.status?.boundVolumeSnapshotContentName;
        if (event.type === 'DELETED' && content)
          keys.push(CONTENT_KEY + content);
        return keys;
      }
      case CONTENTS: {
        if (event.type === 'DELETED') {
          this.outcomes.delete(obj.metadata.uid);
          this.forget(obj.metadata.uid);
        }
        const ref = obj.spec?.volumeSnapshotRef;
        return [
          CONTENT_KEY + obj.metadata.name,
          ...(ref?.namespace && ref?.name
            ? [`${ref.namespace}/${ref.name}`]
            : []),
        ];
      }
      case CLAIMS: {
        const restoring = snapshotSourceOf(obj);
        return [
          ...this.snapshotsByClaim.get(keyOf(obj)),
          ...(restoring ? [`${obj.metadata.namespace}/${restoring}`] : []),
        ];
      }
      case VOLUMES:
        return obj.spec?.claimRef
          ? this.snapshotsByClaim.get(
              `${obj.spec.claimRef.namespace}/${obj.spec.claimRef.name}`,
            )
          : [];
      case SNAPSHOT_CLASSES:
        return this.ctx.store
          .list(SNAPSHOTS, {
            filter: s => !s.status?.boundVolumeSnapshotContentName,
          })
          .items.map(keyOf);
      default:
        return [];
    }
  }

  protected reconcile(key: string) {
    if (key.startsWith(CONTENT_KEY)) {
      this.syncContent(key.slice(CONTENT_KEY.length));
      return;
    }
    const [namespace, name] = splitKey(key);
    const snapshot = this.ctx.store.get(SNAPSHOTS, namespace, name);
    if (!snapshot) return;
    if (snapshot.metadata.deletionTimestamp) {
      this.deleteSnapshot(snapshot);
      return;
    }
    if (!snapshot.spec?.source?.persistentVolumeClaimName) {
      this.bindPreProvisioned(snapshot);
      return;
    }
    const withFinalizer = this.addFinalizers(snapshot, [
      SNAPSHOT_AS_SOURCE_PROTECTION,
    ]);
    const contentName = withFinalizer.status?.boundVolumeSnapshotContentName;
    try {
      if (contentName) this.syncFromContent(withFinalizer, contentName);
      else this.createContent(withFinalizer);
    } catch (e) {
      if (!(e instanceof SnapshotProblem)) throw e;
      this.reportError(withFinalizer, e.reason, e.message);
    }
  }

  // --- the common snapshot-controller -------------------------------------

  private addFinalizers(obj: KubeObject, finalizers: string[]): KubeObject {
    const missing = finalizers.filter(f => !hasFinalizer(obj, f));
    if (missing.length === 0) return obj;
    const copy = structuredClone(obj);
    copy.metadata.finalizers = [
      ...(copy.metadata.finalizers ?? []),
      ...missing,
    ];
    return this.ctx.store.update(SNAPSHOTS, copy);
  }

  private writeStatus(snapshot: KubeObject, status: Record<string, unknown>) {
    const next = { ...snapshot.status, ...status };
    for (const [k, v] of Object.entries(next))
      if (v === undefined) delete next[k];
    if (JSON.stringify(next) === JSON.stringify(snapshot.status ?? {}))
      return snapshot;
    return this.ctx.store.update(SNAPSHOTS, { ...snapshot, status: next });
  }

  private reportError(given: KubeObject, reason: string, message: string) {
    // The attempt may have written the snapshot (its default class) before it failed.
    const snapshot =
      this.ctx.store.get(
        SNAPSHOTS,
        given.metadata.namespace,
        given.metadata.name,
      ) ?? given;
    if (snapshot.metadata.uid !== given.metadata.uid) return;
    if (snapshot.status?.error?.message === message) return;
    this.writeStatus(snapshot, {
      readyToUse: false,
      error: { message, time: now() },
    });
    this.events.warning(snapshot, reason, message);
  }

  /** The claim, its bound CSI volume and the class to use, or the problem that stops the snapshot. */
  private source(snapshot: KubeObject) {
    const store = this.ctx.store;
    const namespace = snapshot.metadata.namespace!;
    const claimName: string = snapshot.spec.source.persistentVolumeClaimName;
    const classProblem = (why: string) =>
      new SnapshotProblem(
        'SetDefaultSnapshotClassFailed',
        `Failed to set default snapshot class with error ${why}`,
      );
    const claim = store.get(CLAIMS, namespace, claimName);
    if (!claim)
      throw classProblem(
        `failed to retrieve PVC ${claimName} from the lister: "persistentvolumeclaim \\"${claimName}\\" not found"`,
      );
    const volumeName = claim.spec?.volumeName;
    if (!volumeName || claim.status?.phase !== 'Bound')
      throw classProblem(
        `the PVC ${claimName} is not yet bound to a PV, will not attempt to take a snapshot`,
      );
    const volume = store.get(VOLUMES, undefined, volumeName);
    if (!volume)
      throw classProblem(
        `failed to retrieve PV ${volumeName} from the API server: persistentvolumes "${volumeName}" not found`,
      );
    const driver: string | undefined = volume.spec?.csi?.driver;
    if (!driver)
      throw classProblem(
        `the volume ${volumeName} of claim ${claimName} is not a CSI volume: only CSI drivers take snapshots`,
      );
    const className: string | undefined = snapshot.spec.volumeSnapshotClassName;
    let snapshotClass: KubeObject | undefined;
    if (className) {
      snapshotClass = store.get(SNAPSHOT_CLASSES, undefined, className);
      if (!snapshotClass)
        throw new SnapshotProblem(
          'GetSnapshotClassFailed',
          `Failed to get snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io "${className}" not found`,
        );
    } else {
      const defaults = store
        .list(SNAPSHOT_CLASSES)
        .items.filter(
          c =>
            c.driver === driver &&
            c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] ===
              'true',
        );
      if (defaults.length === 0)
        throw classProblem('cannot find default snapshot class');
      if (defaults.length > 1)
        throw classProblem(
          `${defaults.length} default snapshot classes were found`,
        );
      snapshotClass = defaults[0];
    }
    if (snapshotClass.driver !== driver)
      throw new SnapshotProblem(
        'SnapshotContentCreationFailed',
        `Failed to create snapshot content with error the VolumeSnapshotClass ${snapshotClass.metadata.name} is of driver ${snapshotClass.driver}, but volume ${volumeName} is of driver ${driver}`,
      );
    return { claim, volume, driver, snapshotClass };
  }

  private createContent(snapshot: KubeObject) {
    const store = this.ctx.store;
    const { claim, volume, snapshotClass } = this.source(snapshot);
    let current = snapshot;
    if (!snapshot.spec.volumeSnapshotClassName) {
      // The controller writes the default class into the snapshot's spec.
      current = store.update(SNAPSHOTS, {
        ...current,
        spec: {
          ...current.spec,
          volumeSnapshotClassName: snapshotClass.metadata.name,
        },
      });
    }
    if (claim.metadata.deletionTimestamp)
      throw new SnapshotProblem(
        'SnapshotContentCreationFailed',
        `Failed to create snapshot content with error snapshot controller failed to update ${claim.metadata.name} on API server: cannot add finalizer on claim because it is being deleted`,
      );
    if (!hasFinalizer(claim, PVC_AS_SOURCE_PROTECTION)) {
      const copy = structuredClone(claim);
      copy.metadata.finalizers = [
        ...(copy.metadata.finalizers ?? []),
        PVC_AS_SOURCE_PROTECTION,
      ];
      store.update(CLAIMS, copy);
    }
    const contentName = `snapcontent-${current.metadata.uid}`;
    tolerate([409], () =>
      store.create(CONTENTS, {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotContent',
        metadata: {
          name: contentName,
          annotations: {
            [ANN_SOURCE_VOLUME]: volume.metadata.name,
            [ANN_SOURCE_CLAIM]: `${claim.metadata.namespace}/${claim.metadata.name}`,
            [ANN_SOURCE_CLAIM_UID]: claim.metadata.uid,
            [ANN_DATA_ORIGIN]:
              volume.metadata.annotations?.[ANN_DATA_ORIGIN] ??
              volume.metadata.name,
          },
        } as unknown as KubeObject['metadata'],
        spec: {
          volumeSnapshotRef: {
            kind: 'VolumeSnapshot',
            namespace: current.metadata.namespace,
            name: current.metadata.name,
            uid: current.metadata.uid,
            apiVersion: 'snapshot.storage.k8s.io/v1',
            resourceVersion: current.metadata.resourceVersion,
          },
          source: { volumeHandle: volume.spec.csi.volumeHandle },
          volumeSnapshotClassName: snapshotClass.metadata.name,
          deletionPolicy: snapshotClass.deletionPolicy,
          driver: snapshotClass.driver,
          sourceVolumeMode: volume.spec.volumeMode ?? 'Filesystem',
        },
      }),
    );
    const bound = this.addFinalizers(
      this.writeStatus(current, {
        boundVolumeSnapshotContentName: contentName,
        readyToUse: false,
        error: undefined,
      }),
      [SNAPSHOT_BOUND_PROTECTION],
    );
    const { namespace, name } = bound.metadata;
    this.events.normal(
      bound,
      'CreatingSnapshot',
      `Waiting for a snapshot ${namespace}/${name} to be created by the CSI driver.`,
    );
  }

  /** A bound snapshot's status follows its content's. */
  private syncFromContent(snapshot: KubeObject, contentName: string) {
    const content = this.ctx.store.get(CONTENTS, undefined, contentName);
    if (
      !content ||
      content.spec?.volumeSnapshotRef?.uid !== snapshot.metadata.uid
    )
      throw new SnapshotProblem(
        'SnapshotContentMissing',
        'VolumeSnapshotContent is missing',
      );
    const status = content.status ?? {};
    const wasReady = snapshot.status?.readyToUse === true;
    const wasCut = snapshot.status?.creationTime !== undefined;
    const updated = this.writeStatus(snapshot, {
      readyToUse: status.readyToUse === true,
      ...(status.creationTime !== undefined
        ? {
            creationTime: `${new Date(status.creationTime / 1e6)
              .toISOString()
              .slice(0, 19)}Z`,
          }
        : {}),
      ...(status.restoreSize !== undefined
        ? { restoreSize: binaryQuantity(status.restoreSize) }
        : {}),
      error: status.error ? { ...status.error } : undefined,
    });
    const { namespace, name } = updated.metadata;
    if (
      status.error &&
      snapshot.status?.error?.message !== status.error.message
    )
      this.events.warning(
        updated,
        'SnapshotCreationFailed',
        status.error.message,
      );
    if (!wasCut && updated.status?.creationTime)
      this.events.normal(
        updated,
        'SnapshotCreated',
        `Snapshot ${namespace}/${name} was successfully created by the CSI driver.`,
      );
    if (!wasReady && updated.status?.readyToUse)
      this.events.normal(
        updated,
        'SnapshotReady',
        `Snapshot ${namespace}/${name} is ready to use.`,
      );
    if (updated.status?.readyToUse) this.releaseClaim(updated, false);
  }

  /** Drops pvc-as-source-protection once no other snapshot of the claim is still being taken. */
  private releaseClaim(snapshot: KubeObject, snapshotGoing: boolean) {
    const namespace = snapshot.metadata.namespace!;
    const claimName = snapshot.spec?.source?.persistentVolumeClaimName;
    if (!claimName) return;
    const claim = this.ctx.store.get(CLAIMS, namespace, claimName);
    if (!claim || !hasFinalizer(claim, PVC_AS_SOURCE_PROTECTION)) return;
    const busy = this.snapshotsByClaim
      .get(`${namespace}/${claimName}`)
      .some(key => {
        const other = this.ctx.store.get(SNAPSHOTS, ...splitKey(key));
        if (!other) return false;
        if (snapshotGoing && other.metadata.uid === snapshot.metadata.uid)
          return false;
        return other.status?.readyToUse !== true;
      });
    if (!busy)
      removeFinalizer(this.ctx.store, CLAIMS, claim, PVC_AS_SOURCE_PROTECTION);
  }

  private deleteSnapshot(snapshot: KubeObject) {
    const store = this.ctx.store;
    const namespace = snapshot.metadata.namespace!;
    const restoring = store
      .list(CLAIMS, { namespace })
      .items.some(
        c =>
          snapshotSourceOf(c) === snapshot.metadata.name &&
          c.status?.phase === 'Pending' &&
          !c.metadata.deletionTimestamp,
      );
    if (restoring) {
      this.events.normal(
        snapshot,
        'SnapshotDeletePending',
        'Snapshot is being used to restore a PVC',
      );
      return;
    }
    const contentName = snapshot.status?.boundVolumeSnapshotContentName;
    const content = contentName
      ? store.get(CONTENTS, undefined, contentName)
      : undefined;
    if (
      content &&
      content.spec?.volumeSnapshotRef?.uid === snapshot.metadata.uid &&
      content.spec.deletionPolicy === 'Delete' &&
      !content.metadata.deletionTimestamp
    ) {
      const marked = store.update(CONTENTS, {
        ...content,
        metadata: {
          ...content.metadata,
          annotations: {
            ...content.metadata.annotations,
            [ANN_SNAPSHOT_BEING_DELETED]: 'yes',
          },
        },
      });
      tolerate([404, 409], () =>
        store.delete(CONTENTS, undefined, marked.metadata.name, {
          preconditions: { uid: marked.metadata.uid },
        }),
      );
    }
    this.releaseClaim(snapshot, true);
    const copy = structuredClone(snapshot);
    copy.metadata.finalizers = (copy.metadata.finalizers ?? []).filter(
      f =>
        f !== SNAPSHOT_AS_SOURCE_PROTECTION && f !== SNAPSHOT_BOUND_PROTECTION,
    );
    if (
      copy.metadata.finalizers.length !==
      (snapshot.metadata.finalizers ?? []).length
    )
      store.update(SNAPSHOTS, copy);
  }

  /** A snapshot of an existing content: bound when the content names it back. */
  private bindPreProvisioned(snapshot: KubeObject) {
    const contentName: string = snapshot.spec.source.volumeSnapshotContentName;
    const content = this.ctx.store.get(CONTENTS, undefined, contentName);
    const ref = content?.spec?.volumeSnapshotRef;
    if (
      !content ||
      ref?.name !== snapshot.metadata.name ||
      ref?.namespace !== snapshot.metadata.namespace
    ) {
      this.reportError(
        snapshot,
        'SnapshotContentMissing',
        content
          ? `VolumeSnapshotContent ${contentName} is bound to another snapshot (${ref?.namespace}/${ref?.name})`
          : 'VolumeSnapshotContent is missing',
      );
      return;
    }
    if (!ref.uid) {
      this.ctx.store.update(CONTENTS, {
        ...content,
        spec: {
          ...content.spec,
          volumeSnapshotRef: { ...ref, uid: snapshot.metadata.uid },
        },
      });
      return;
    }
    if (ref.uid !== snapshot.metadata.uid) {
      this.reportError(
        snapshot,
        'SnapshotContentMissing',
        `VolumeSnapshotContent ${contentName} is bound to another snapshot (uid ${ref.uid})`,
      );
      return;
    }
    const bound = this.addFinalizers(
      this.writeStatus(snapshot, {
        boundVolumeSnapshotContentName: contentName,
      }),
      [SNAPSHOT_AS_SOURCE_PROTECTION, SNAPSHOT_BOUND_PROTECTION],
    );
    this.syncFromContent(bound, contentName);
  }

  // --- the CSI driver's csi-snapshotter sidecar ---------------------------

  private syncContent(name: string) {
    const store = this.ctx.store;
    const content = store.get(CONTENTS, undefined, name);
    if (!content) return;
    if (content.metadata.deletionTimestamp) {
      // Delete: the driver deletes the physical snapshot. Retain: it stays in the storage system.
      if (hasFinalizer(content, CONTENT_BOUND_PROTECTION))
        removeFinalizer(store, CONTENTS, content, CONTENT_BOUND_PROTECTION);
      return;
    }
    const ref = content.spec?.volumeSnapshotRef;
    const snapshot = ref?.name
      ? store.get(SNAPSHOTS, ref.namespace, ref.name)
      : undefined;
    if (
      ref?.uid &&
      (!snapshot || snapshot.metadata.uid !== ref.uid) &&
      content.spec.deletionPolicy === 'Delete'
    ) {
      // The snapshot it was bound to is gone (its deletion deleted this content, or it went before).
      tolerate([404, 409], () =>
        store.delete(CONTENTS, undefined, name, {
          preconditions: { uid: content.metadata.uid },
        }),
      );
      return;
    }
    let current = content;
    if (!hasFinalizer(current, CONTENT_BOUND_PROTECTION)) {
      const copy = structuredClone(current);
      copy.metadata.finalizers = [
        ...(copy.metadata.finalizers ?? []),
        CONTENT_BOUND_PROTECTION,
      ];
      current = store.update(CONTENTS, copy);
    }
    const volumeHandle = current.spec?.source?.volumeHandle;
    const status = current.status ?? {};
    if (!volumeHandle) {
      // Pre-provisioned: the driver lists the snapshot it already has.
      if (status.readyToUse !== true)
        store.update(CONTENTS, {
          ...current,
          status: {
            ...status,
            snapshotHandle: current.spec.source?.snapshotHandle,
            readyToUse: true,
          },
        });
      return;
    }
    if (status.error) return;
    const outcome = this.outcomeOf(current, snapshot);
    if (outcome.error !== undefined) {
      store.update(CONTENTS, {
        ...current,
        status: {
          readyToUse: false,
          error: {
            message: `Failed to check and update snapshot content: failed to take snapshot of the volume ${volumeHandle}: "rpc error: code = Internal desc = ${outcome.error}"`,
            time: now(),
          },
        },
      });
      return;
    }
    if (status.snapshotHandle === undefined) {
      const volume = store.get(
        VOLUMES,
        undefined,
        current.metadata.annotations?.[ANN_SOURCE_VOLUME] ?? '',
      );
      if (!volume || volume.spec?.csi?.volumeHandle !== volumeHandle) {
        store.update(CONTENTS, {
          ...current,
          status: {
            readyToUse: false,
            error: {
              message: `Failed to check and update snapshot content: failed to take snapshot of the volume ${volumeHandle}: "rpc error: code = NotFound desc = volume ${volumeHandle} not found"`,
              time: now(),
            },
          },
        });
        return;
      }
      const ready = (outcome.readyAfterSeconds ?? this.readySeconds) <= 0;
      store.update(CONTENTS, {
        ...current,
        status: {
          snapshotHandle: `snap-${randomBytes(8).toString('hex')}`,
          creationTime: Date.now() * 1e6,
          restoreSize: parseQuantity(volume.spec.capacity?.storage),
          readyToUse: ready,
        },
      });
      if (ready) return;
    }
    if (status.readyToUse === true) return;
    if (
      this.elapsed(
        current.metadata.uid,
        'ready',
        outcome.readyAfterSeconds ?? this.readySeconds,
        CONTENT_KEY + name,
      )
    ) {
      const latest = store.get(CONTENTS, undefined, name)!;
      store.update(CONTENTS, {
        ...latest,
        status: { ...latest.status, readyToUse: true },
      });
    }
  }

  /** The driver's answer for this content, decided once: a rule, else the snapshot's or its class's annotations. */
  private outcomeOf(content: KubeObject, snapshot: KubeObject | undefined) {
    let outcome = this.outcomes.get(content.metadata.uid);
    if (outcome) return outcome;
    const className: string = content.spec.volumeSnapshotClassName ?? '';
    const snapshotClass = this.ctx.store.get(
      SNAPSHOT_CLASSES,
      undefined,
      className,
    );
    const [namespace, claim] = splitKey(
      content.metadata.annotations?.[ANN_SOURCE_CLAIM] ?? '',
    );
    const annotated = (obj: KubeObject | undefined): SnapshotOutcome => {
      const a = obj?.metadata.annotations ?? {};
      const seconds = Number(a[ANN_READY_AFTER_SECONDS]);
      return {
        ...(a[ANN_READY_AFTER_SECONDS] !== undefined &&
        Number.isFinite(seconds) &&
        seconds >= 0
          ? { readyAfterSeconds: seconds }
          : {}),
        ...(a[ANN_SNAPSHOT_ERROR] !== undefined
          ? { error: a[ANN_SNAPSHOT_ERROR] }
          : {}),
      };
    };
    outcome = this.behaviours.take({
      namespace: namespace ?? '',
      snapshot: content.spec.volumeSnapshotRef?.name ?? '',
      claim,
      snapshotClass: className,
    }) ?? { ...annotated(snapshotClass), ...annotated(snapshot) };
    this.outcomes.set(content.metadata.uid, outcome);
    return outcome;
  }
}
