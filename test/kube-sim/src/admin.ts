import { errors } from './errors';
import type { KubeSim } from './index';

type AdminRequest = {
  method: string;
  path: string;
  body: any;
  query: URLSearchParams;
};

/**
 * The admin API under /_sim (outside /api and /apis), for tests and demos
 * that drive the simulator from another process.
 *   GET|POST|DELETE /faults[/<id>]   POST /latency {ms}   POST /watches/drop
 *   POST /controllers/pause|resume   GET|DELETE /requests   POST /compact
 *   POST /tokens {user, rules, namespaces?}
 *   POST /bindings {subjects, rules, namespaces?} → {id}   DELETE /bindings/<id>
 *   POST /client-certificates {user, groups?} → {cert, key}   (https only)
 *   GET|POST|DELETE /snapshot-behaviours[/<id>]   (SnapshotBehaviourRule: how the CSI driver answers)
 */
export function createAdminHandler(sim: () => KubeSim) {
  const bindings = new Map<number, () => void>();
  let nextBinding = 1;
  return ({ method, path, body }: AdminRequest): unknown => {
    const s = sim();
    const route = `${method} ${path}`;
    const faultId = path.match(/^\/faults\/(\d+)$/);
    if (faultId && method === 'DELETE') {
      s.faults.remove(Number(faultId[1]));
      return { removed: Number(faultId[1]) };
    }
    const behaviourId = path.match(/^\/snapshot-behaviours\/(\d+)$/);
    if (behaviourId && method === 'DELETE') {
      s.removeSnapshotBehaviour(Number(behaviourId[1]));
      return { removed: Number(behaviourId[1]) };
    }
    const bindingId = Number(path.match(/^\/bindings\/(\d+)$/)?.[1]);
    if (bindingId && method === 'DELETE') {
      const remove = bindings.get(bindingId);
      if (!remove) throw errors.badRequest(`no binding ${bindingId}`);
      remove();
      bindings.delete(bindingId);
      return { removed: bindingId };
    }
    switch (route) {
      case 'GET /faults':
        return { faults: s.faults.list(), latencyMs: s.faults.latencyMs };
      case 'POST /faults':
        if (!body || typeof body !== 'object')
          throw errors.badRequest('a fault rule object is required');
        return { id: s.addFault(body) };
      case 'DELETE /faults':
        s.clearFaults();
        return { cleared: true };
      case 'POST /latency':
        if (!Number.isFinite(body?.ms) || body.ms < 0)
          throw errors.badRequest('{"ms": <non-negative number>} is required');
        s.setLatency(body.ms);
        return { latencyMs: body.ms };
      case 'POST /watches/drop':
        return { dropped: s.dropWatches() };
      case 'POST /controllers/pause':
        s.pauseControllers();
        return { controllers: 'paused' };
      case 'POST /controllers/resume':
        s.resumeControllers();
        return { controllers: 'running' };
      case 'GET /snapshot-behaviours':
        return { rules: s.snapshotBehaviours() };
      case 'POST /snapshot-behaviours': {
        if (!body || typeof body !== 'object' || Array.isArray(body))
          throw errors.badRequest(
            '{"namespace"?, "snapshot"?, "claim"?, "snapshotClass"?: string, "readyAfterSeconds"?: number, "error"?: string, "times"?: number} is required',
          );
        try {
          return { id: s.addSnapshotBehaviour(body) };
        } catch (e) {
          throw errors.badRequest((e as Error).message);
        }
      }
      case 'DELETE /snapshot-behaviours':
        s.clearSnapshotBehaviours();
        return { cleared: true };
      case 'GET /requests':
        return { requests: s.requests() };
      case 'DELETE /requests':
        s.clearRequests();
        return { cleared: true };
      case 'POST /compact':
        s.compact();
        return { compacted: true };
      case 'POST /tokens':
        if (typeof body?.user !== 'string' || !Array.isArray(body?.rules)) {
          throw errors.badRequest(
            '{"user": string, "rules": PolicyRule[], "namespaces"?: string[]} is required',
          );
        }
        return {
          token: s.addToken({
            user: body.user,
            rules: body.rules,
            namespaces: body.namespaces,
          }),
        };
      case 'POST /bindings': {
        const valid =
          Array.isArray(body?.subjects) &&
          body.subjects.every(
            (x: any) =>
              (x?.kind === 'User' || x?.kind === 'Group') &&
              typeof x?.name === 'string',
          ) &&
          Array.isArray(body?.rules);
        if (!valid)
          throw errors.badRequest(
            '{"subjects": [{"kind": "User"|"Group", "name": string}], "rules": PolicyRule[], "namespaces"?: string[]} is required',
          );
        const id = nextBinding++;
        bindings.set(
          id,
          s.addBinding({
            subjects: body.subjects,
            rules: body.rules,
            namespaces: body.namespaces,
          }),
        );
        return { id };
      }
      case 'POST /client-certificates':
        if (typeof body?.user !== 'string' || !body.user)
          throw errors.badRequest(
            '{"user": string, "groups"?: string[]} is required',
          );
        if (!s.clientCaCert)
          throw errors.badRequest('client certificates need https');
        return s.issueClientCertificate({
          user: body.user,
          groups: Array.isArray(body.groups) ? body.groups : [],
        });
      default:
        return undefined;
    }
  };
}
