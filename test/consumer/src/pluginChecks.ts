import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TERMINAL_JOB_STATUSES } from 'backstage-plugin-pvc-pruner-common';
import { KubeSim } from 'kube-sim';
import { parse } from 'yaml';

const ORDERS = 'component:default/orders';
/** The claims kube-sim's demo scenario left when orders-db scaled down from 5 to 2. */
const ORDERS_DB_ORPHANS = [
  'data-orders-db-2',
  'data-orders-db-3',
  'data-orders-db-4',
  'wal-orders-db-2',
  'wal-orders-db-3',
];

async function expectOk(res: Response, what: string) {
  if (!res.ok)
    throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function poll<T>(
  what: string,
  attempt: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `${what}: no answer within ${timeoutMs / 1000} s${
          last ? ` (${last})` : ''
        }`,
      );
    await new Promise(resolve => setTimeout(resolve, 500));
  }
}

/** What a platform team checks after installing: the plugin answers, scans and dry-runs through its API. */
export class PluginChecks {
  private readonly api: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
    private readonly sim: KubeSim,
    private readonly packageDir: string,
  ) {
    this.api = `${baseUrl}/api/pvc-pruner`;
  }

  private get(path: string) {
    return fetch(`${this.api}${path}`, {
      headers: { authorization: `Bearer ${this.token}` },
    });
  }

  async health() {
    const body = await expectOk(
      await fetch(`${this.api}/health`),
      'GET /api/pvc-pruner/health',
    );
    if (body.status !== 'ok')
      throw new Error(`/health said ${JSON.stringify(body)}`);
  }

  /** The spec the package ships (src/schema/openapi.yaml) is the one the backend serves. */
  async spec() {
    const shipped = parse(
      readFileSync(join(this.packageDir, 'src/schema/openapi.yaml'), 'utf8'),
    );
    const served = await expectOk(
      await this.get('/openapi.json'),
      'GET /api/pvc-pruner/openapi.json',
    );
    // The backend serves its paths under the plugin's base path.
    const paths = (doc: { paths: object }) =>
      Object.keys(doc.paths)
        .map(path => path.replace(/^\/api\/pvc-pruner\//, '/'))
        .sort()
        .join(' ');
    if (paths(served) !== paths(shipped))
      throw new Error(
        `the served spec has paths ${paths(served)}, the shipped one ${paths(
          shipped,
        )}`,
      );
  }

  /** Scans the catalog entity (once the catalog has read it) and finds orders-db's orphans. */
  async scan() {
    const answer = await poll(
      'a scan of component:default/orders',
      async () => {
        const res = await this.get(
          `/v1/orphans?entityRef=${encodeURIComponent(ORDERS)}`,
        );
        if (res.status === 404) return undefined; // the catalog has not read the entity yet
        return expectOk(res, 'GET /v1/orphans');
      },
    );
    const cluster = answer.clusters.find(
      (c: { cluster: string }) => c.cluster === 'sim',
    );
    if (!cluster?.ok)
      throw new Error(
        `cluster sim failed the scan: ${JSON.stringify(
          cluster ?? answer.clusters,
        )}`,
      );
    const sts = cluster.statefulSets.find(
      (s: { name: string }) => s.name === 'orders-db',
    );
    const names = (sts?.orphans ?? [])
      .map((o: { name: string }) => o.name)
      .sort();
    if (names.join(' ') !== ORDERS_DB_ORPHANS.join(' '))
      throw new Error(
        `the scan found orphans ${
          names.join(', ') || 'none'
        }, expected ${ORDERS_DB_ORPHANS.join(', ')}`,
      );
    return sts as {
      namespace: string;
      name: string;
      orphans: Array<{ name: string; uid: string }>;
    };
  }

  /** A dry run of every orphan succeeds, reports each as deleted, and deletes none. */
  async dryRun(sts: Awaited<ReturnType<PluginChecks['scan']>>) {
    const res = await fetch(`${this.api}/v1/prune-jobs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${this.token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        entityRef: ORDERS,
        cluster: 'sim',
        namespace: sts.namespace,
        statefulSet: sts.name,
        pvcs: sts.orphans.map(o => ({ name: o.name, uid: o.uid })),
        dryRun: true,
      }),
    });
    if (res.status !== 202)
      throw new Error(
        `POST /v1/prune-jobs answered ${res.status}: ${await res.text()}`,
      );
    const { id } = await res.json();
    const job = await poll('the dry run to finish', async () => {
      const current = await expectOk(
        await this.get(`/v1/prune-jobs/${id}`),
        `GET /v1/prune-jobs/${id}`,
      );
      return TERMINAL_JOB_STATUSES.includes(current.status)
        ? current
        : undefined;
    });
    if (job.status !== 'succeeded' || job.dryRun !== true)
      throw new Error(
        `the dry run ended ${job.status}: ${JSON.stringify(job.summary)}`,
      );
    const reported = job.summary.deleted
      .map((d: { name: string }) => d.name)
      .sort();
    if (reported.join(' ') !== ORDERS_DB_ORPHANS.join(' '))
      throw new Error(`the dry run reported ${reported.join(', ')} as deleted`);
    const gone = ORDERS_DB_ORPHANS.filter(
      name => !this.sim.store.get('persistentvolumeclaims', 'shop', name),
    );
    if (gone.length > 0)
      throw new Error(`the dry run deleted ${gone.join(', ')}`);
  }
}
