/*
 * Waiting for the demo to be ready: the backend (pvc-pruner's health, the
 * demo catalog, the warehouse cluster at its new address), the frontend dev
 * server, and the backend serving again after a restart.
 */
import { Child, stop } from './childProcesses';
import { DemoRun, READY_TIMEOUT_MS, say, shown, sleep } from './demoRun';

async function get(url: string, init?: RequestInit) {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  } catch {
    return undefined;
  }
}

/** Polls `check` until it returns a truthy value; gives up when a child dies or the time runs out. */
/** Polls `check` until it returns a truthy value; gives up when a child dies or the time runs out. */
async function waitFor<T>(
  run: DemoRun,
  what: string,
  check: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = run.started + READY_TIMEOUT_MS;
  for (;;) {
    if (run.stopping) return new Promise<T>(() => {});
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) {
      say(
        `Gave up waiting for ${what} after ${
          READY_TIMEOUT_MS / 1000
        } s; see ${shown(run.logDir)}/`,
      );
      return stop(run, 1);
    }
    await sleep(500);
  }
}

/** Who the demo's guest is signed in as: their Backstage token and the entity refs they own through. */
export interface GuestIdentity {
  token: string;
  ownershipEntityRefs: string[];
}

/**
 * Signs in as the demo's guest (POST /api/auth/guest/refresh) and returns the
 * guest's identity once the catalog knows them as a member of team checkout
 * (before that they own nothing); undefined until then.
 */
export async function guestIdentity(
  backendUrl: string,
): Promise<GuestIdentity | undefined> {
  const res = await get(`${backendUrl}/api/auth/guest/refresh`, {
    method: 'POST',
    headers: { 'X-Requested-With': 'XMLHttpRequest' },
  });
  if (!res?.ok) return undefined;
  const body = (await res.json()) as {
    backstageIdentity?: {
      token?: string;
      identity?: { ownershipEntityRefs?: string[] };
    };
  };
  const refs = body.backstageIdentity?.identity?.ownershipEntityRefs ?? [];
  const token = body.backstageIdentity?.token;
  return token && refs.includes('group:default/checkout')
    ? { token, ownershipEntityRefs: refs }
    : undefined;
}

/** The guest's token, once they are a member of team checkout (see {@link guestIdentity}). */
export async function guestToken(
  backendUrl: string,
): Promise<string | undefined> {
  return (await guestIdentity(backendUrl))?.token;
}

/** The guest's token from a demo that is ready; an error when the guest cannot sign in. */
export async function requireGuestToken(backendUrl: string): Promise<string> {
  return (await requireGuestIdentity(backendUrl)).token;
}

/** The guest's identity from a demo that is ready; an error when the guest cannot sign in. */
export async function requireGuestIdentity(
  backendUrl: string,
): Promise<GuestIdentity> {
  const identity = await guestIdentity(backendUrl);
  if (!identity) {
    throw new Error(
      `the guest could not sign in at ${backendUrl} as a member of team checkout`,
    );
  }
  return identity;
}

/** The backend is ready when pvc-pruner answers and the catalog has loaded the demo entities (or the guest would own nothing). */
export async function waitForBackend(run: DemoRun) {
  const { backendUrl } = run;
  await waitFor(
    run,
    'the backend (/api/pvc-pruner/health)',
    async () => (await get(`${backendUrl}/api/pvc-pruner/health`))?.ok,
  );
  const token = await waitFor(
    run,
    'the demo catalog (the guest as a member of group checkout)',
    () => guestToken(backendUrl),
  );
  await waitFor(run, 'the demo components in the catalog', async () => {
    const res = await get(`${backendUrl}/api/catalog/entities/by-refs`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({
        entityRefs: [
          'component:default/orders',
          'component:default/cart',
          'component:default/search-index',
        ],
      }),
    });
    if (!res?.ok) return undefined;
    const { items } = (await res.json()) as { items: unknown[] };
    return items.every(Boolean);
  });
  await waitForWarehouseInCatalog(run, token);
}

/**
 * The catalog is kept in the state folder, and with it the warehouse Resource
 * of the last run: the address and CA of a simulator that is gone. The
 * catalog would read the new file minutes later; until then the card says
 * warehouse is unreachable. Ask for a refresh now and wait for it.
 */
async function waitForWarehouseInCatalog(run: DemoRun, token: string) {
  const { backendUrl } = run;
  const url = run.warehouseSim!.url;
  const headers = {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
  };
  let refreshedAt = 0;
  await waitFor(
    run,
    'the warehouse cluster at its new address in the catalog',
    async () => {
      const res = await get(
        `${backendUrl}/api/catalog/entities/by-name/resource/default/warehouse`,
        { headers },
      );
      if (res?.ok) {
        const entity = (await res.json()) as {
          metadata: { annotations?: Record<string, string> };
        };
        if (entity.metadata.annotations?.['kubernetes.io/api-server'] === url)
          return true;
      }
      if (Date.now() - refreshedAt > 5000) {
        refreshedAt = Date.now();
        await get(`${backendUrl}/api/catalog/refresh`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ entityRef: 'resource:default/warehouse' }),
        });
      }
      return undefined;
    },
  );
}

/** After a restart: one line once the backend answers again. */
export async function sayWhenServing(run: DemoRun, child: Child) {
  const { backendUrl } = run;
  while (!child.exited && !run.stopping) {
    if ((await get(`${backendUrl}/api/pvc-pruner/health`))?.ok) {
      say(`[backend] backend is serving again at ${backendUrl}`);
      return;
    }
    await sleep(500);
  }
}

export async function waitForFrontend(run: DemoRun) {
  await waitFor(run, 'the frontend dev server', async () => {
    const res = await get(run.frontendUrl);
    return res?.ok && (await res.text()).includes('id="root"');
  });
}
