import { createHash } from 'node:crypto';
import {
  LoggerService,
  RootSystemMetadataService,
} from '@backstage/backend-plugin-api';
import { parseEntityRef } from '@backstage/catalog-model';
import type { NotificationService } from '@backstage/plugin-notifications-node';
import type { PruneJob, PvcOutcome } from 'backstage-plugin-pvc-pruner-common';
import type { PlannedClaim, PlannedGroup } from './types';

/** The topic of every automatic-pruning notice, so users can filter or mute them. */
export const AUTO_PRUNE_TOPIC = 'pvc-pruner automatic pruning';
const NOTIFICATIONS_PLUGIN_ID = 'notifications';
/** Claims listed by name in one notice; the rest are counted. */
const LISTED_CLAIMS = 20;
const MAX_DESCRIPTION = 4000;
/** The notifications backend stores a scope in 255 characters. */
const MAX_SCOPE = 255;
const GIB = 2 ** 30;

const when = new Intl.DateTimeFormat('en', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});

/** A date as owners read it, in UTC. */
export const formatWhen = (iso: string) => `${when.format(new Date(iso))} UTC`;

const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`;

/**
 * The notice scope of a StatefulSet's planned prune: the before-notice, a
 * failed dry run and the after-notice of the same claims share it, so each
 * updates the one before instead of adding another.
 */
export function noticeScope(group: PlannedGroup, eligibleAt: string): string {
  const place = `${group.cluster}/${group.namespace}/${group.statefulSet}`;
  const scope = `pvc-pruner:auto-prune:${place}:${eligibleAt.slice(0, 10)}`;
  if (scope.length <= MAX_SCOPE) return scope;
  // Long names: still one scope per StatefulSet and day, within the column.
  const digest = createHash('sha256').update(place).digest('hex').slice(0, 32);
  return `pvc-pruner:auto-prune:${digest}:${eligibleAt.slice(0, 10)}`;
}

/** The entity's Kubernetes tab, where the card is: `/catalog/<namespace>/<kind>/<name>/kubernetes`. */
export function entityCardLink(entityRef: string): string {
  const { kind, namespace, name } = parseEntityRef(entityRef);
  return `/catalog/${encodeURIComponent(
    namespace.toLocaleLowerCase('en-US'),
  )}/${encodeURIComponent(
    kind.toLocaleLowerCase('en-US'),
  )}/${encodeURIComponent(name)}/kubernetes`;
}

function listed<T>(items: T[], line: (item: T) => string): string[] {
  const lines = items.slice(0, LISTED_CLAIMS).map(item => `- ${line(item)}`);
  if (items.length > LISTED_CLAIMS)
    lines.push(`- and ${items.length - LISTED_CLAIMS} more`);
  return lines;
}

const claims = (n: number) => `${n} claim${n === 1 ? '' : 's'}`;

/** The bytes of claims together. */
export const totalBytes = (items: Array<{ bytes: number }>) =>
  items.reduce((sum, c) => sum + c.bytes, 0);

/** "StatefulSet shop/orders-db in cluster demo". */
const placeOf = (group: PlannedGroup) =>
  `StatefulSet ${group.namespace}/${group.statefulSet} in cluster ${group.cluster}`;

/**
 * Why a notice of a StatefulSet several entities claim names no claim: its
 * recipients are each claimant's owners, and the card shows the claims only
 * to who may read every claimant. Naming the claimants lets owners notice
 * one they did not expect.
 */
function sharedNote(group: PlannedGroup, where: string): string {
  return `This StatefulSet is claimed by ${group.claimants.join(
    ', ',
  )}, so this notice names no claim: ${where} on the card, shown to whoever may read each of them.`;
}

/** ", k of them restorable from their snapshots until at least D", for claims deleted. */
function restorable(deleted: PvcOutcome[]): string {
  const expiries = deleted.flatMap(c =>
    c.snapshot ? [c.snapshot.expiresAt] : [],
  );
  if (expiries.length === 0) return ', with no snapshot';
  const until = formatWhen(expiries.sort()[0]);
  return expiries.length === deleted.length
    ? `, each restorable from its snapshot until at least ${until}`
    : `, ${expiries.length} of them restorable from their snapshots until at least ${until}`;
}

/** What an automatic prune of one StatefulSet did, for its after-notice. */
export interface AutoPruneResult {
  group: PlannedGroup;
  /** The real prune job, once ended. */
  job: PruneJob;
  /** Eligible claims this run left for a later one (the run's limits). */
  deferred: PlannedClaim[];
  /** Claims the dry run held back (a keep that came after planning, or a reason of their own): not pruned. */
  keptAtDryRun?: PvcOutcome[];
  scope: string;
  /** `pvcPruner.pricing.currency`, when priced. */
  currency?: string;
}

/**
 * Tells the owners of automated StatefulSets, through Backstage
 * notifications, what automatic pruning will do and did. Every claimant of
 * the StatefulSet is a recipient (an entity resolves to its owners). Best
 * effort: without the notifications backend `send` throws; the run goes on,
 * and this logs once that owners can't be told.
 */
export class AutoPruneNotifier {
  private warned = false;

  constructor(
    private readonly deps: {
      notifications: NotificationService;
      /**
       * Which plugins the Backstage system has: this backend's, and those
       * `discovery.endpoints` routes to other backends. How it is known,
       * before sending anything, whether notifications can be delivered.
       */
      systemMetadata: Pick<RootSystemMetadataService, 'getInstalledPlugins'>;
      logger: LoggerService;
    },
  ) {}

  /** Whether the notifications backend is installed in this Backstage system. */
  async available(): Promise<boolean> {
    const plugins = await this.deps.systemMetadata.getInstalledPlugins();
    const found = plugins.some(p => p.pluginId === NOTIFICATIONS_PLUGIN_ID);
    if (!found)
      this.warnOnce(
        'the notifications backend (@backstage/plugin-notifications-backend) is not installed in this Backstage system',
      );
    return found;
  }

  /** "N claims of <sts> will be pruned on D unless you keep them." Answers whether it was sent. */
  before(
    group: PlannedGroup,
    upcoming: PlannedClaim[],
    prunedOn: string,
    scope: string,
  ): Promise<boolean> {
    const howToKeep =
      'To keep one, use "Keep this claim" on the card, or annotate it pvc-pruner.backstage.io/keep=true.';
    const what = placeOf(group);
    return this.send(group, {
      title: `${claims(upcoming.length)} of ${
        group.statefulSet
      } will be pruned on ${formatWhen(prunedOn)} unless you keep them`,
      description: [
        `Automatic pruning (pvc-pruner.backstage.io/auto-prune) will delete these orphaned claims of ${what}:`,
        ...listed(
          upcoming,
          c =>
            `${c.name} (${gib(c.bytes)}), eligible on ${formatWhen(
              c.eligibleAt,
            )}`,
        ),
        howToKeep,
      ],
      counted: [
        `Automatic pruning (pvc-pruner.backstage.io/auto-prune) will delete ${claims(
          upcoming.length,
        )} of ${what} (${gib(totalBytes(upcoming))}), the first on ${formatWhen(
          prunedOn,
        )}.`,
        sharedNote(group, 'they are listed'),
        howToKeep,
      ],
      severity: 'normal',
      scope,
    });
  }

  /** A dry run failed: nothing of the StatefulSet was pruned, and why. */
  dryRunFailed(
    group: PlannedGroup,
    claimsOf: PlannedClaim[],
    reason: string,
    scope: string,
  ): Promise<boolean> {
    return this.send(group, {
      title: `${claims(claimsOf.length)} of ${group.statefulSet} ${
        claimsOf.length === 1 ? 'was' : 'were'
      } not pruned: the dry run failed`,
      description: [
        `Automatic pruning did not delete anything of ${placeOf(
          group,
        )}, because its dry run failed: ${reason}`,
        'The next run tries again.',
      ],
      counted: [
        `Automatic pruning did not delete anything of ${placeOf(
          group,
        )}, because its dry run failed.`,
        sharedNote(group, "why is in the dry run's history"),
        'The next run tries again.',
      ],
      severity: 'high',
      scope,
    });
  }

  /** What the automatic prune deleted, how to restore it, what it kept and what it reclaimed. */
  after(result: AutoPruneResult): Promise<boolean> {
    const { group, job, deferred, scope, currency } = result;
    const keptAtDryRun = result.keptAtDryRun ?? [];
    const { deleted, skipped, failed, terminating, bytesReclaimed } =
      job.summary;
    const costs = new Map(
      [...group.eligible].map(c => [c.uid, c.monthlyCost] as const),
    );
    const monthly = deleted.reduce<number | undefined>((sum, c) => {
      const cost = costs.get(c.uid);
      return sum === undefined || cost === undefined ? undefined : sum + cost;
    }, 0);
    const money =
      currency && monthly !== undefined && deleted.length > 0
        ? ` and ${new Intl.NumberFormat('en', {
            style: 'currency',
            currency,
          }).format(monthly)} a month`
        : '';
    const notDeleted = [
      ...group.kept.map(k => ({
        name: k.name,
        why: `kept: ${k.keep.reason ?? k.keep.source}${
          k.keep.keptBy ? ` (by ${k.keep.keptBy})` : ''
        }`,
      })),
      ...[...keptAtDryRun, ...skipped, ...failed].map(c => ({
        name: c.name,
        why: c.reason ?? 'not deleted',
      })),
      ...terminating.map(c => ({
        name: c.name,
        why: `still terminating, held by ${(c.finalizers ?? []).join(', ')}`,
      })),
      ...deferred.map(c => ({
        name: c.name,
        why: "left for the next run (this run's limit)",
      })),
    ];
    return this.send(group, {
      title: `${claims(deleted.length)} of ${
        group.statefulSet
      } pruned automatically: ${gib(bytesReclaimed)}${money} reclaimed`,
      description: [
        `Automatic pruning of ${placeOf(group)} (job ${job.id}, ${
          job.status
        }).`,
        ...(deleted.length > 0 ? ['Deleted:'] : []),
        ...listed(deleted, c =>
          c.snapshot
            ? `${c.name}: restorable from snapshot ${
                c.snapshot.name
              } until ${formatWhen(c.snapshot.expiresAt)}`
            : `${c.name}${
                c.noSnapshot ? `: no snapshot (${c.noSnapshot})` : ''
              }`,
        ),
        ...(notDeleted.length > 0 ? ['Not deleted:'] : []),
        ...listed(notDeleted, c => `${c.name}: ${c.why}`),
      ],
      counted: [
        `Automatic pruning of ${placeOf(group)} (job ${job.id}, ${
          job.status
        }).`,
        ...(deleted.length > 0
          ? [`Deleted ${claims(deleted.length)}${restorable(deleted)}.`]
          : []),
        ...(notDeleted.length > 0
          ? [`Not deleted: ${claims(notDeleted.length)}.`]
          : []),
        sharedNote(group, 'which ones, their snapshots and why are in the job'),
      ],
      severity: deleted.length > 0 ? 'normal' : 'low',
      scope,
    });
  }

  /**
   * Sends the notice to the claimant's owners, listing the claims, when one
   * entity claims the StatefulSet. When several do, each one's owners get
   * the `counted` notice, linked to their own card: a co-claimant's owners
   * may not be allowed to read the others, and any catalog author can
   * co-claim a StatefulSet. Answers whether every notice was sent.
   */
  private async send(
    group: PlannedGroup,
    notice: {
      title: string;
      description: string[];
      counted: string[];
      severity: 'high' | 'normal' | 'low';
      scope: string;
    },
  ): Promise<boolean> {
    const { title, severity, scope } = notice;
    if (group.claimants.length === 0) return false;
    const shared = group.claimants.length > 1;
    const text = (shared ? notice.counted : notice.description).join('\n');
    const description =
      text.length > MAX_DESCRIPTION
        ? `${text.slice(0, MAX_DESCRIPTION - 1)}…`
        : text;
    const sent = await Promise.all(
      group.claimants.map(async entityRef => {
        try {
          await this.deps.notifications.send({
            recipients: { type: 'entity', entityRef },
            payload: {
              title,
              description,
              severity,
              scope,
              link: entityCardLink(entityRef),
              topic: AUTO_PRUNE_TOPIC,
            },
          });
          return true;
        } catch (e) {
          this.warnOnce(String(e));
          return false;
        }
      }),
    );
    return sent.every(Boolean);
  }

  private warnOnce(why: string) {
    if (this.warned) return;
    this.warned = true;
    this.deps.logger.warn(
      `pvc-pruner: owners can't be told of automatic pruning (${why}); it runs all the same. Install the notifications backend, or set pvcPruner.autoPrune.requireNotifications to refuse to run without it.`,
    );
  }
}
