import { SimClock } from '../clock';
import { ObjectStore } from '../store';
import { Controller } from './Controller';
import { GarbageCollector } from './GarbageCollector';
import { NamespaceController } from './NamespaceController';
import { PodLifecycleController } from './PodLifecycleController';
import { ProvisioningController } from './ProvisioningController';
import { PvcProtectionController } from './PvcProtectionController';
import { PvProtectionController } from './PvProtectionController';
import { PvReclaimController } from './PvReclaimController';
import { SnapshotController } from './SnapshotController';
import { SnapshotBehaviours } from '../snapshots/SnapshotBehaviours';
import { StatefulSetController } from './StatefulSetController';

export { Controller } from './Controller';

/** Simulated seconds for the steps that take time in a real cluster. */
export interface ControllerOptions {
  /** Scheduling to Running and Ready (default 2). */
  podStartupSeconds?: number;
  /** Claim to provisioned volume (default 1). */
  provisioningSeconds?: number;
  /** Released volume with reclaim policy Delete to deleted (default 1). */
  reclaimSeconds?: number;
  /** A VolumeSnapshot's cut to readyToUse, unless a rule or annotation says otherwise (default 1). */
  snapshotReadySeconds?: number;
}

export interface RunningControllers {
  readonly controllers: readonly Controller[];
  pause(): void;
  resume(): void;
  stop(): void;
  /** True when no controller has queued, running or delayed work. */
  idle(): boolean;
}

/** Starts the kube-controller-manager, scheduler and kubelet stand-ins against a store. */
export function startControllers({
  store,
  clock,
  options = {},
  snapshotBehaviours = new SnapshotBehaviours(),
}: {
  store: ObjectStore;
  clock: SimClock;
  options?: ControllerOptions;
  /** How the simulated CSI driver answers each snapshot (see SnapshotBehaviours). */
  snapshotBehaviours?: SnapshotBehaviours;
}): RunningControllers {
  const ctx = { store, clock };
  const controllers: Controller[] = [
    new GarbageCollector(ctx),
    new NamespaceController(ctx),
    new StatefulSetController(ctx),
    new PodLifecycleController(ctx, options.podStartupSeconds ?? 2),
    new PvcProtectionController(ctx),
    new ProvisioningController(ctx, options.provisioningSeconds ?? 1),
    new PvReclaimController(ctx, options.reclaimSeconds ?? 1),
    new PvProtectionController(ctx),
    new SnapshotController(
      ctx,
      snapshotBehaviours,
      options.snapshotReadySeconds ?? 1,
    ),
  ];
  for (const controller of controllers) controller.start();
  return {
    controllers,
    pause: () => controllers.forEach(c => c.pause()),
    resume: () => controllers.forEach(c => c.resume()),
    stop: () => controllers.forEach(c => c.stop()),
    idle: () => controllers.every(c => c.idle),
  };
}
