import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  eventually,
  namespace,
  pvc,
  RawResponse,
  SimHarness,
  sleep,
  startHarness,
  statefulSet,
} from './helpers';

jest.setTimeout(30000);

const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';
const PROTOBUF = { 'Content-Type': 'application/vnd.kubernetes.protobuf' };
/** A Pod body as kubectl sent it (see fixtures/protobuf/capture.ts). */
const podProtobuf = () =>
  readFileSync(join(__dirname, 'fixtures/protobuf/debug-copy.pb'));

/** Asserts a metav1.Status failure body with this code and reason; returns it. */
function expectStatus(res: RawResponse, code: number, reason: string) {
  expect({
    status: res.status,
    contentType: res.headers['content-type'],
  }).toEqual({ status: code, contentType: 'application/json' });
  const body = res.json();
  expect(body).toMatchObject({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code,
    reason,
  });
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  return body;
}

describe('errors are metav1.Status with the right code and reason', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({ https: false, controllers: false });
    h.sim.store.create(
      'persistentvolumeclaims',
      pvc('existing', 'default', { labels: { app: 'x' } }),
    );
    h.sim.store.create('apps/statefulsets', statefulSet('web'));
    h.sim.store.create('namespaces', namespace('team-a'));
    h.sim.store.create('persistentvolumeclaims', pvc('claim-a', 'team-a'));
  });

  afterEach(() => {
    h.sim.clearFaults();
  });

  afterAll(async () => {
    await h?.close();
  });

  describe('400 Bad Request', () => {
    it('malformed JSON', async () => {
      const res = await h.http('POST', PVCS, {
        body: '{"apiVersion": "v1", "kind": ',
      });
      const body = expectStatus(res, 400, 'BadRequest');
      expect(body.message).toContain('JSON');
    });

    it('a body that is not an object', async () => {
      expectStatus(
        await h.http('POST', PVCS, { body: '[1, 2]' }),
        400,
        'BadRequest',
      );
      expectStatus(
        await h.http('POST', PVCS, { body: '"a string"' }),
        400,
        'BadRequest',
      );
    });

    it('a kind that does not match the resource', async () => {
      expectStatus(
        await h.http('POST', PVCS, { body: statefulSet('wrong-kind') }),
        400,
        'BadRequest',
      );
    });

    it('a spec or status that is not an object (a decode error, not a crash)', async () => {
      for (const spec of ['nope', 42, ['ReadWriteOnce'], true]) {
        const res = await h.http('POST', PVCS, {
          body: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'weird-spec' },
            spec,
          },
        });
        expectStatus(res, 400, 'BadRequest');
      }
      expectStatus(
        await h.http('POST', PVCS, {
          body: { ...pvc('weird-status'), status: 'Bound' },
        }),
        400,
        'BadRequest',
      );
      expectStatus(
        await h.http('PATCH', `${PVCS}/existing`, {
          body: { spec: 'nope' },
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
        400,
        'BadRequest',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'weird-spec'),
      ).toBeUndefined();
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')?.spec
          .accessModes,
      ).toEqual(['ReadWriteOnce']);
    });

    it('a namespace in the body that does not match the URL', async () => {
      const body = expectStatus(
        await h.http('POST', PVCS, { body: pvc('other-ns', 'team-a') }),
        400,
        'BadRequest',
      );
      expect(body.message).toBe(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    });

    it('bad label and field selectors', async () => {
      for (const selector of ['app in (a', 'app=a=b', '=x', 'a b']) {
        const res = await h.http(
          'GET',
          `${PVCS}?labelSelector=${encodeURIComponent(selector)}`,
        );
        expectStatus(res, 400, 'BadRequest');
      }
      expectStatus(
        await h.http(
          'GET',
          `${PVCS}?fieldSelector=${encodeURIComponent('spec.volumeName=x')}`,
        ),
        400,
        'BadRequest',
      );
      expectStatus(
        await h.http(
          'GET',
          `${PVCS}?fieldSelector=${encodeURIComponent('nonsense')}`,
        ),
        400,
        'BadRequest',
      );
      // and on watches
      expectStatus(
        await h.http(
          'GET',
          `${PVCS}?watch=true&labelSelector=${encodeURIComponent('app in (a')}`,
        ),
        400,
        'BadRequest',
      );
    });

    it('a non-numeric watch resourceVersion and a bad dryRun value', async () => {
      expectStatus(
        await h.http('GET', `${PVCS}?watch=true&resourceVersion=abc`),
        400,
        'BadRequest',
      );
      expectStatus(
        await h.http('POST', `${PVCS}?dryRun=Some`, { body: pvc('dry-bad') }),
        400,
        'BadRequest',
      );
    });

    it('a bad propagationPolicy', async () => {
      const res = await h.http('DELETE', `${PVCS}/existing`, {
        body: {
          kind: 'DeleteOptions',
          apiVersion: 'v1',
          propagationPolicy: 'Sideways',
        },
      });
      expectStatus(res, 400, 'BadRequest');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')
          ?.metadata.deletionTimestamp,
      ).toBeUndefined();
    });
  });

  describe('401 Unauthorized', () => {
    it('no token, a wrong token, another scheme', async () => {
      const headerSets: Array<Record<string, string>> = [
        {},
        { Authorization: 'Bearer wrong-token' },
        { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
      ];
      for (const headers of headerSets) {
        const res = await h.http('GET', PVCS, { token: null, headers });
        const body = expectStatus(res, 401, 'Unauthorized');
        expect(body.message).toBe('Unauthorized');
      }
      // discovery needs a token too
      expectStatus(
        await h.http('GET', '/api', { token: null }),
        401,
        'Unauthorized',
      );
      expectStatus(
        await h.http('GET', '/apis', { token: 'nope' }),
        401,
        'Unauthorized',
      );
    });

    it('/version and the health endpoints are open', async () => {
      const version = await h.http('GET', '/version', { token: null });
      expect(version.status).toBe(200);
      expect(version.json()).toMatchObject({ major: '1', minor: '32' });
      for (const path of ['/healthz', '/livez', '/readyz']) {
        const res = await h.http('GET', path, { token: null });
        expect([res.status, res.text]).toEqual([200, 'ok']);
      }
    });
  });

  describe('403 Forbidden', () => {
    it('a token without the verb', async () => {
      const reader = h.sim.addToken({
        user: 'reader',
        rules: [
          {
            apiGroups: [''],
            resources: ['persistentvolumeclaims'],
            verbs: ['get', 'list', 'watch'],
          },
        ],
      });
      expect((await h.http('GET', PVCS, { token: reader })).status).toBe(200);
      expect(
        (await h.http('GET', `${PVCS}/existing`, { token: reader })).status,
      ).toBe(200);

      const del = expectStatus(
        await h.http('DELETE', `${PVCS}/existing`, { token: reader }),
        403,
        'Forbidden',
      );
      expect(del.message).toBe(
        'persistentvolumeclaims "existing" is forbidden: User "reader" cannot delete resource "persistentvolumeclaims" in API group "" in the namespace "default"',
      );
      expect(del.details).toEqual({
        name: 'existing',
        kind: 'persistentvolumeclaims',
      });

      const create = expectStatus(
        await h.http('POST', PVCS, { token: reader, body: pvc('by-reader') }),
        403,
        'Forbidden',
      );
      expect(create.message).toBe(
        'persistentvolumeclaims is forbidden: User "reader" cannot create resource "persistentvolumeclaims" in API group "" in the namespace "default"',
      );
      const sts = expectStatus(
        await h.http('GET', '/apis/apps/v1/namespaces/default/statefulsets', {
          token: reader,
        }),
        403,
        'Forbidden',
      );
      expect(sts.message).toBe(
        'statefulsets.apps is forbidden: User "reader" cannot list resource "statefulsets" in API group "apps" in the namespace "default"',
      );
      const pvs = expectStatus(
        await h.http('GET', '/api/v1/persistentvolumes', { token: reader }),
        403,
        'Forbidden',
      );
      expect(pvs.message).toBe(
        'persistentvolumes is forbidden: User "reader" cannot list resource "persistentvolumes" in API group "" at the cluster scope',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')
          ?.metadata.deletionTimestamp,
      ).toBeUndefined();
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'by-reader'),
      ).toBeUndefined();
    });

    it('a namespace-limited token', async () => {
      const teamA = h.sim.addToken({
        user: 'team-a-bot',
        rules: [
          {
            apiGroups: [''],
            resources: ['persistentvolumeclaims'],
            verbs: ['*'],
          },
        ],
        namespaces: ['team-a'],
      });
      const own = await h.http(
        'GET',
        '/api/v1/namespaces/team-a/persistentvolumeclaims',
        { token: teamA },
      );
      expect(own.status).toBe(200);
      expect(own.json().items.map((i: any) => i.metadata.name)).toEqual([
        'claim-a',
      ]);

      const other = expectStatus(
        await h.http('GET', PVCS, { token: teamA }),
        403,
        'Forbidden',
      );
      expect(other.message).toBe(
        'persistentvolumeclaims is forbidden: User "team-a-bot" cannot list resource "persistentvolumeclaims" in API group "" in the namespace "default"',
      );
      const all = expectStatus(
        await h.http('GET', '/api/v1/persistentvolumeclaims', { token: teamA }),
        403,
        'Forbidden',
      );
      expect(all.message).toBe(
        'persistentvolumeclaims is forbidden: User "team-a-bot" cannot list resource "persistentvolumeclaims" in API group "" at the cluster scope',
      );
      expectStatus(
        await h.http('DELETE', `${PVCS}/existing`, { token: teamA }),
        403,
        'Forbidden',
      );
      expectStatus(
        await h.http('GET', `${PVCS}?watch=true`, { token: teamA }),
        403,
        'Forbidden',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')
          ?.metadata.deletionTimestamp,
      ).toBeUndefined();
    });

    it('resourceNames limit a token to named objects', async () => {
      const named = h.sim.addToken({
        user: 'one-claim',
        rules: [
          {
            apiGroups: [''],
            resources: ['persistentvolumeclaims'],
            verbs: ['get'],
            resourceNames: ['existing'],
          },
        ],
      });
      expect(
        (await h.http('GET', `${PVCS}/existing`, { token: named })).status,
      ).toBe(200);
      expectStatus(
        await h.http('GET', `${PVCS}/claim-b`, { token: named }),
        403,
        'Forbidden',
      );
      expectStatus(
        await h.http('GET', PVCS, { token: named }),
        403,
        'Forbidden',
      );
    });

    it('a subresource needs its own rule, and the message names the resource as kube-apiserver does', async () => {
      const stsOnly = h.sim.addToken({
        user: 'sts-editor',
        rules: [
          { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['*'] },
        ],
      });
      const scalePath =
        '/apis/apps/v1/namespaces/default/statefulsets/web/scale';
      expect(
        (
          await h.http(
            'GET',
            '/apis/apps/v1/namespaces/default/statefulsets/web',
            { token: stsOnly },
          )
        ).status,
      ).toBe(200);
      const res = await h.http('PATCH', scalePath, {
        token: stsOnly,
        body: { spec: { replicas: 0 } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      const body = expectStatus(res, 403, 'Forbidden');
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'web')!.spec.replicas,
      ).toBe(1);
      // kube-apiserver: NewForbidden(GroupResource{apps, statefulsets}, name, "User ... cannot patch resource \"statefulsets/scale\" ...")
      expect(body.message).toBe(
        'statefulsets.apps "web" is forbidden: User "sts-editor" cannot patch resource "statefulsets/scale" in API group "apps" in the namespace "default"',
      );
      expect(body.details).toEqual({
        name: 'web',
        group: 'apps',
        kind: 'statefulsets',
      });

      const scaler = h.sim.addToken({
        user: 'scaler',
        rules: [
          {
            apiGroups: ['apps'],
            resources: ['statefulsets/scale'],
            verbs: ['get', 'patch'],
          },
        ],
      });
      const ok = await h.http('PATCH', scalePath, {
        token: scaler,
        body: { spec: { replicas: 2 } },
        headers: { 'Content-Type': 'application/merge-patch+json' },
      });
      expect(ok.status).toBe(200);
      expect(ok.json()).toMatchObject({
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        spec: { replicas: 2 },
      });
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'web')!.spec.replicas,
      ).toBe(2);
    });
  });

  describe('404 Not Found', () => {
    it('unknown resource paths', async () => {
      for (const path of [
        '/api/v1/namespaces/default/foos',
        '/api/v1/foos',
        '/apis/example.com/v1/things',
        '/apis/apps/v2/statefulsets',
        '/api/v1/namespaces/default/pods/p/frobnicate',
        '/api/v1/namespaces/default/persistentvolumeclaims/existing/log',
        '/api/v1/namespaces/default/persistentvolumes',
        '/nothing-here',
      ]) {
        const body = expectStatus(await h.http('GET', path), 404, 'NotFound');
        expect(body.message).toContain(
          'the server could not find the requested resource',
        );
      }
    });

    it("a missing pod's log is the pod's NotFound, as kube-apiserver answers", async () => {
      const body = expectStatus(
        await h.http('GET', '/api/v1/namespaces/default/pods/p/log'),
        404,
        'NotFound',
      );
      expect(body.message).toBe('pods "p" not found');
    });

    it('a missing object', async () => {
      const body = expectStatus(
        await h.http('GET', `${PVCS}/nope`),
        404,
        'NotFound',
      );
      expect(body.message).toBe('persistentvolumeclaims "nope" not found');
      expect(body.details).toEqual({
        name: 'nope',
        kind: 'persistentvolumeclaims',
      });
      const sts = expectStatus(
        await h.http(
          'GET',
          '/apis/apps/v1/namespaces/default/statefulsets/nope',
        ),
        404,
        'NotFound',
      );
      expect(sts.message).toBe('statefulsets.apps "nope" not found');
      expect(sts.details).toEqual({
        name: 'nope',
        group: 'apps',
        kind: 'statefulsets',
      });
      expectStatus(await h.http('DELETE', `${PVCS}/nope`), 404, 'NotFound');
      expectStatus(
        await h.http('PATCH', `${PVCS}/nope`, {
          body: {},
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
        404,
        'NotFound',
      );
      expectStatus(
        await h.http('PUT', `${PVCS}/nope`, { body: pvc('nope') }),
        404,
        'NotFound',
      );
    });

    it('creating in a missing namespace', async () => {
      const body = expectStatus(
        await h.http(
          'POST',
          '/api/v1/namespaces/missing-ns/persistentvolumeclaims',
          { body: pvc('x', 'missing-ns') },
        ),
        404,
        'NotFound',
      );
      expect(body.message).toBe('namespaces "missing-ns" not found');
    });
  });

  describe('405 Method Not Allowed', () => {
    it('POST to a named object', async () => {
      expectStatus(
        await h.http('POST', `${PVCS}/existing`, { body: pvc('existing') }),
        405,
        'MethodNotAllowed',
      );
      expectStatus(
        await h.http('PUT', PVCS, { body: pvc('existing') }),
        405,
        'MethodNotAllowed',
      );
    });
  });

  describe('409 Conflict', () => {
    it('AlreadyExists', async () => {
      const body = expectStatus(
        await h.http('POST', PVCS, { body: pvc('existing') }),
        409,
        'AlreadyExists',
      );
      expect(body.message).toBe(
        'persistentvolumeclaims "existing" already exists',
      );
      expect(body.details).toEqual({
        name: 'existing',
        kind: 'persistentvolumeclaims',
      });
    });

    it('Conflict on a stale resourceVersion', async () => {
      const current = h.sim.store.get(
        'persistentvolumeclaims',
        'default',
        'existing',
      )!;
      const stale = {
        ...current,
        metadata: {
          ...current.metadata,
          resourceVersion: '1',
          labels: { app: 'changed' },
        },
      };
      const body = expectStatus(
        await h.http('PUT', `${PVCS}/existing`, { body: stale }),
        409,
        'Conflict',
      );
      expect(body.message).toContain('the object has been modified');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing'),
      ).toBe(current);
    });

    it('Conflict on stale delete preconditions', async () => {
      const body = expectStatus(
        await h.http('DELETE', `${PVCS}/existing`, {
          body: {
            kind: 'DeleteOptions',
            apiVersion: 'v1',
            preconditions: { uid: 'not-the-uid' },
          },
        }),
        409,
        'Conflict',
      );
      expect(body.message).toContain(
        'Precondition failed: UID in precondition: not-the-uid',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')
          ?.metadata.deletionTimestamp,
      ).toBeUndefined();
    });
  });

  describe('410 Gone', () => {
    it('a watch or a continue token from before a compaction is Expired', async () => {
      const page = (
        await h.http('GET', '/api/v1/persistentvolumeclaims?limit=1')
      ).json();
      expect(page.metadata.continue).toBeTruthy();
      const oldRv = h.sim.store.resourceVersion;
      h.sim.store.create('persistentvolumeclaims', pvc('compaction-1'));
      const compacted = await h.http('POST', '/_sim/compact');
      expect([compacted.status, compacted.json()]).toEqual([
        200,
        { compacted: true },
      ]);
      h.sim.store.create('persistentvolumeclaims', pvc('compaction-2'));

      const watch = await h.http(
        'GET',
        `${PVCS}?watch=true&resourceVersion=${oldRv}`,
        { streamMs: 500 },
      );
      // kube-apiserver's watch cache and etcd3 watcher answer 200 and a single ERROR event holding the Status.
      expect(watch.status).toBe(200);
      const outcome = watch.text
        .trim()
        .split('\n')
        .map(line => JSON.parse(line));
      expect(outcome).toEqual([
        {
          type: 'ERROR',
          object: expect.objectContaining({
            kind: 'Status',
            code: 410,
            reason: 'Expired',
          }),
        },
      ]);
      const cont = await h.http(
        'GET',
        `/api/v1/persistentvolumeclaims?limit=1&continue=${encodeURIComponent(
          page.metadata.continue,
        )}`,
      );
      expectStatus(cont, 410, 'Expired');
    });
  });

  describe('410 on a watch is an event, not an HTTP status', () => {
    afterEach(() => h.sim.clearFaults());

    it('an injected Expired on a watch arrives as kube-apiserver sends it: 200, one ERROR event, end of stream', async () => {
      h.sim.addFault({ verb: 'watch', status: 410, times: 1 });

      const watch = await h.http(
        'GET',
        `${PVCS}?watch=true&resourceVersion=${h.sim.store.resourceVersion}`,
        { streamMs: 500 },
      );

      expect([watch.status, JSON.parse(watch.text.trim())]).toEqual([
        200,
        {
          type: 'ERROR',
          object: expect.objectContaining({
            kind: 'Status',
            code: 410,
            reason: 'Expired',
          }),
        },
      ]);
    });

    it('a resourceVersion that does not parse is still refused with an HTTP 400, before any stream', async () => {
      const watch = await h.http(
        'GET',
        `${PVCS}?watch=true&resourceVersion=abc`,
        { streamMs: 500 },
      );

      expectStatus(watch, 400, 'BadRequest');
    });
  });

  describe('413 Request Entity Too Large', () => {
    it('a body over 3 MiB is refused and nothing is stored', async () => {
      const big = pvc('too-big');
      big.metadata.annotations = { blob: 'x'.repeat(3 * 1024 * 1024 + 10) };
      const body = expectStatus(
        await h.http('POST', PVCS, { body: big }),
        413,
        'RequestEntityTooLarge',
      );
      expect(body.message).toContain('3145728');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'too-big'),
      ).toBeUndefined();
      // the connection-level limit holds for patches too
      expectStatus(
        await h.http('PATCH', `${PVCS}/existing`, {
          body: {
            metadata: { annotations: { blob: 'y'.repeat(3 * 1024 * 1024) } },
          },
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
        413,
        'RequestEntityTooLarge',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')
          ?.metadata.annotations,
      ).toBeUndefined();
    });

    it('a body just under the limit is accepted', async () => {
      const fits = pvc('fits');
      fits.metadata.annotations = { blob: 'x'.repeat(200 * 1024) };
      const res = await h.http('POST', PVCS, { body: fits });
      expect(res.status).toBe(201);
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'fits')?.metadata
          .annotations?.blob,
      ).toHaveLength(200 * 1024);
    });
  });

  describe('protobuf bodies', () => {
    it('a truncated one is a 400 and creates nothing', async () => {
      const body = podProtobuf().subarray(0, 100);
      const res = await h.http('POST', '/api/v1/namespaces/default/pods', {
        body,
        headers: PROTOBUF,
      });
      const status = expectStatus(res, 400, 'BadRequest');
      expect(status.message).toMatch(
        /^the body of the request could not be decoded as application\/vnd\.kubernetes\.protobuf: /,
      );
      expect(h.sim.store.list('pods').items).toEqual([]);
    });

    it('one without the k8s\\0 magic is a 400', async () => {
      const res = await h.http('POST', '/api/v1/namespaces', {
        body: JSON.stringify(namespace('not-protobuf')),
        headers: PROTOBUF,
      });
      expectStatus(res, 400, 'BadRequest');
    });

    it('one of a kind that does not match the URL is a 400', async () => {
      const res = await h.http('POST', PVCS, {
        body: podProtobuf(),
        headers: PROTOBUF,
      });
      expectStatus(res, 400, 'BadRequest');
    });

    it('one of a kind kube-sim has no decoder for is a 415 saying to send JSON', async () => {
      const typeMeta = Buffer.from(
        '\n\x07apps/v1\x12\x0bStatefulSet',
        'latin1',
      );
      const body = Buffer.concat([
        Buffer.from('k8s\0', 'latin1'),
        Buffer.from([0x0a, typeMeta.length]),
        typeMeta,
      ]);
      const res = await h.http(
        'POST',
        '/apis/apps/v1/namespaces/default/statefulsets',
        {
          body,
          headers: PROTOBUF,
        },
      );
      const status = expectStatus(res, 415, 'UnsupportedMediaType');
      expect(status.message).toContain('send it as application/json');
    });

    it('an update is a 415 (the decoder knows what a create needs, not every field)', async () => {
      const res = await h.http('PUT', '/api/v1/namespaces/team-a', {
        body: readFileSync(
          join(__dirname, 'fixtures/protobuf/create-namespace.pb'),
        ),
        headers: PROTOBUF,
      });
      const status = expectStatus(res, 415, 'UnsupportedMediaType');
      expect(status.message).toContain('send an update as application/json');
    });

    it('a pod as kubectl sent it is created, and deleted with its DeleteOptions', async () => {
      const pods = '/api/v1/namespaces/default/pods';
      const res = await h.http('POST', pods, {
        body: podProtobuf(),
        headers: PROTOBUF,
      });
      expect(res.status).toBe(201);
      expect(res.json().metadata.name).toBe('runner-debug');
      // scheduled, so that only gracePeriodSeconds 0 deletes it at once
      const created = h.sim.store.get('pods', 'default', 'runner-debug')!;
      h.sim.store.update('pods', {
        ...created,
        spec: { ...created.spec, nodeName: 'sim-node-1' },
      });
      // kubectl debug --replace deletes with gracePeriodSeconds 0, in protobuf
      const deleted = await h.http('DELETE', `${pods}/runner-debug`, {
        body: readFileSync(
          join(__dirname, 'fixtures/protobuf/debug-replace-2.pb'),
        ),
        headers: PROTOBUF,
      });
      expect(deleted.status).toBe(200);
      expect(
        h.sim.store.get('pods', 'default', 'runner-debug'),
      ).toBeUndefined();
    });
  });

  describe('415 Unsupported Media Type', () => {
    it('an unknown content type', async () => {
      const res = await h.http('POST', PVCS, {
        body: JSON.stringify(pvc('plain')),
        headers: { 'Content-Type': 'text/plain' },
      });
      expectStatus(res, 415, 'UnsupportedMediaType');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'plain'),
      ).toBeUndefined();
    });

    it('a PATCH sent as application/json', async () => {
      const res = await h.http('PATCH', `${PVCS}/existing`, {
        body: { metadata: { labels: { a: 'b' } } },
      });
      expectStatus(res, 415, 'UnsupportedMediaType');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')
          ?.metadata.labels,
      ).toEqual({ app: 'x' });
    });

    it('YAML bodies are accepted', async () => {
      const yaml =
        'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: from-yaml\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n';
      const res = await h.http('POST', PVCS, {
        body: yaml,
        headers: { 'Content-Type': 'application/yaml' },
      });
      expect(res.status).toBe(201);
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'from-yaml'),
      ).toBeDefined();
    });
  });

  describe('422 Unprocessable Entity', () => {
    it('an invalid name', async () => {
      const body = expectStatus(
        await h.http('POST', PVCS, { body: pvc('Bad_Name') }),
        422,
        'Invalid',
      );
      expect(body.message).toMatch(
        /^PersistentVolumeClaim "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
      );
      expect(body.details).toMatchObject({
        name: 'Bad_Name',
        kind: 'PersistentVolumeClaim',
      });
      expect(body.details.causes).toEqual([
        expect.objectContaining({
          reason: 'FieldValueInvalid',
          field: 'metadata.name',
        }),
      ]);
      const ns = expectStatus(
        await h.http('POST', '/api/v1/namespaces', {
          body: namespace('has.dots'),
        }),
        422,
        'Invalid',
      );
      expect(ns.message).toContain('RFC 1123 label');
    });

    it('missing required fields', async () => {
      const noName = expectStatus(
        await h.http('POST', PVCS, {
          body: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: {},
            spec: {},
          },
        }),
        422,
        'Invalid',
      );
      expect(noName.details.causes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            field: 'metadata.name',
            reason: 'FieldValueRequired',
          }),
        ]),
      );

      const noSpec = expectStatus(
        await h.http('POST', PVCS, {
          body: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'no-spec' },
          },
        }),
        422,
        'Invalid',
      );
      const fields = noSpec.details.causes.map((c: any) => c.field);
      expect(fields).toEqual(
        expect.arrayContaining(['spec.accessModes', 'spec.resources[storage]']),
      );
      expect(
        noSpec.details.causes.every(
          (c: any) => c.reason === 'FieldValueRequired',
        ),
      ).toBe(true);

      // spec: null decodes to an empty spec, which misses the required fields
      const nullSpec = expectStatus(
        await h.http('POST', PVCS, {
          body: {
            apiVersion: 'v1',
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'null-spec' },
            spec: null,
          },
        }),
        422,
        'Invalid',
      );
      expect(nullSpec.details.causes.map((c: any) => c.field)).toEqual(
        expect.arrayContaining(['spec.accessModes', 'spec.resources[storage]']),
      );

      const sts = statefulSet('no-selector');
      delete sts.spec.selector;
      const stsBody = expectStatus(
        await h.http('POST', '/apis/apps/v1/namespaces/default/statefulsets', {
          body: sts,
        }),
        422,
        'Invalid',
      );
      expect(stsBody.details).toMatchObject({
        name: 'no-selector',
        group: 'apps',
        kind: 'StatefulSet',
      });
      expect(stsBody.details.causes.map((c: any) => c.field)).toContain(
        'spec.selector',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'no-spec'),
      ).toBeUndefined();
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'no-selector'),
      ).toBeUndefined();
    });

    it('an invalid label value', async () => {
      const body = expectStatus(
        await h.http('POST', PVCS, {
          body: pvc('bad-label', 'default', { labels: { app: 'not valid!' } }),
        }),
        422,
        'Invalid',
      );
      expect(body.details.causes.map((c: any) => c.field)).toContain(
        'metadata.labels',
      );
    });
  });

  describe('injected faults', () => {
    it('429 Too Many Requests, with a Retry-After as kube-apiserver sends', async () => {
      const id = h.sim.addFault({
        verb: 'list',
        resource: 'persistentvolumeclaims',
        status: 429,
        times: 1,
      });
      expect(typeof id).toBe('number');
      const res = await h.http('GET', PVCS);
      const body = expectStatus(res, 429, 'TooManyRequests');
      expect(body.details).toMatchObject({ retryAfterSeconds: 1 });
      // the fault is spent after one use
      expect((await h.http('GET', PVCS)).status).toBe(200);
      // kube-apiserver (responsewriters.ErrorNegotiated) sets Retry-After from details.retryAfterSeconds
      expect(res.headers['retry-after']).toBe('1');
    });

    it('500 Internal Error, only where the rule matches', async () => {
      h.sim.addFault({
        verb: 'get',
        resource: 'persistentvolumeclaims',
        namespace: 'team-a',
        status: 500,
      });
      const body = expectStatus(
        await h.http(
          'GET',
          '/api/v1/namespaces/team-a/persistentvolumeclaims/claim-a',
        ),
        500,
        'InternalError',
      );
      expect(body.message).toBe('Internal error occurred: injected fault');
      expectStatus(
        await h.http(
          'GET',
          '/api/v1/namespaces/team-a/persistentvolumeclaims/claim-a',
        ),
        500,
        'InternalError',
      );
      expect((await h.http('GET', `${PVCS}/existing`)).status).toBe(200);
      expect(
        (
          await h.http(
            'GET',
            '/api/v1/namespaces/team-a/persistentvolumeclaims',
          )
        ).status,
      ).toBe(200);
    });

    it('a rule with rate 0 never fires; a custom message is used', async () => {
      h.sim.addFault({ verb: 'get', status: 500, rate: 0 });
      expect((await h.http('GET', `${PVCS}/existing`)).status).toBe(200);
      h.sim.addFault({
        verb: 'create',
        resource: 'persistentvolumeclaims',
        status: 503,
        message: 'etcd is sad',
      });
      const body = expectStatus(
        await h.http('POST', PVCS, { body: pvc('during-outage') }),
        503,
        'ServiceUnavailable',
      );
      expect(body.message).toBe('etcd is sad');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'during-outage'),
      ).toBeUndefined();
    });

    it('an injected 409 comes before the write', async () => {
      h.sim.addFault({
        verb: 'delete',
        resource: 'persistentvolumeclaims',
        status: 409,
        times: 1,
      });
      expectStatus(await h.http('DELETE', `${PVCS}/existing`), 409, 'Conflict');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'existing')
          ?.metadata.deletionTimestamp,
      ).toBeUndefined();
    });
  });
});

describe('the admin API under /_sim', () => {
  let h: SimHarness;
  let plainToken: string;

  beforeAll(async () => {
    h = await startHarness({ https: false, controllers: false });
    h.sim.store.create('persistentvolumeclaims', pvc('existing'));
    plainToken = h.sim.addToken({
      user: 'not-admin',
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    });
  });

  afterAll(async () => {
    await h?.close();
  });

  const post = (path: string, body?: unknown) =>
    h.http('POST', path, body === undefined ? {} : { body: body as object });

  it('faults: add, list, fire, remove, clear', async () => {
    expect((await h.http('GET', '/_sim/faults')).json()).toEqual({
      faults: [],
      latencyMs: 0,
    });
    const added = await post('/_sim/faults', {
      verb: 'get',
      resource: 'persistentvolumeclaims',
      status: 503,
      times: 2,
    });
    expect(added.status).toBe(200);
    const { id } = added.json();
    expect(typeof id).toBe('number');
    const second = (
      await post('/_sim/faults', { verb: 'list', status: 500 })
    ).json().id;
    expect((await h.http('GET', '/_sim/faults')).json().faults).toEqual([
      {
        id,
        verb: 'get',
        resource: 'persistentvolumeclaims',
        status: 503,
        times: 2,
      },
      { id: second, verb: 'list', status: 500 },
    ]);

    expectStatus(
      await h.http('GET', `${PVCS}/existing`),
      503,
      'ServiceUnavailable',
    );
    expectStatus(await h.http('GET', PVCS), 500, 'InternalError');

    expect((await h.http('DELETE', `/_sim/faults/${second}`)).json()).toEqual({
      removed: second,
    });
    expect((await h.http('GET', PVCS)).status).toBe(200);
    expect(
      (await h.http('GET', '/_sim/faults'))
        .json()
        .faults.map((f: any) => [f.id, f.times]),
    ).toEqual([[id, 1]]);

    expect((await h.http('DELETE', '/_sim/faults')).json()).toEqual({
      cleared: true,
    });
    expect((await h.http('GET', `${PVCS}/existing`)).status).toBe(200);
    expect((await h.http('GET', '/_sim/faults')).json().faults).toEqual([]);

    expectStatus(
      await post('/_sim/faults', 'not an object'),
      400,
      'BadRequest',
    );
    expectStatus(await post('/_sim/faults'), 400, 'BadRequest');
  });

  it('latency slows every request until reset', async () => {
    expect((await post('/_sim/latency', { ms: 250 })).json()).toEqual({
      latencyMs: 250,
    });
    let started = Date.now();
    expect((await h.http('GET', `${PVCS}/existing`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect((await h.http('GET', '/_sim/faults')).json().latencyMs).toBe(250);

    expect((await post('/_sim/latency', { ms: 0 })).json()).toEqual({
      latencyMs: 0,
    });
    started = Date.now();
    await h.http('GET', `${PVCS}/existing`);
    expect(Date.now() - started).toBeLessThan(200);

    expectStatus(await post('/_sim/latency', { ms: -5 }), 400, 'BadRequest');
    expectStatus(
      await post('/_sim/latency', { ms: 'slow' }),
      400,
      'BadRequest',
    );
    expectStatus(await post('/_sim/latency', {}), 400, 'BadRequest');
  });

  it('watches/drop ends open watches', async () => {
    const rv = h.sim.store.resourceVersion;
    const watch = h.http('GET', `${PVCS}?watch=true&resourceVersion=${rv}`);
    let ended = false;
    void watch.then(() => {
      ended = true;
    });
    // the watch is open: it sees a change
    await sleep(100);
    h.sim.store.create('persistentvolumeclaims', pvc('seen-by-watch'));
    await sleep(100);
    expect(ended).toBe(false);
    const dropped = await post('/_sim/watches/drop');
    expect(dropped.status).toBe(200);
    expect(dropped.json().dropped).toBeGreaterThanOrEqual(1);
    const res = await Promise.race([watch, sleep(2000).then(() => undefined)]);
    expect(res).toBeDefined();
    expect(res!.status).toBe(200);
    const events = res!.text
      .trim()
      .split('\n')
      .map(line => JSON.parse(line));
    expect(events.map(e => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'seen-by-watch'],
    ]);
    expect((await post('/_sim/watches/drop')).json()).toEqual({ dropped: 0 });
  });

  it('controllers/pause and controllers/resume answer', async () => {
    expect((await post('/_sim/controllers/pause')).json()).toEqual({
      controllers: 'paused',
    });
    expect((await post('/_sim/controllers/resume')).json()).toEqual({
      controllers: 'running',
    });
  });

  it('requests: the log of served requests, and clearing it', async () => {
    await h.http('GET', `${PVCS}/missing-for-log`);
    await h.http('GET', PVCS, { token: null });
    const log = (await h.http('GET', '/_sim/requests')).json().requests;
    const missing = log.find((r: any) => r.path === `${PVCS}/missing-for-log`);
    expect(missing).toMatchObject({
      method: 'GET',
      verb: 'get',
      resource: 'persistentvolumeclaims',
      namespace: 'default',
      status: 404,
      user: 'kube-sim-admin',
    });
    expect(typeof missing.durationMs).toBe('number');
    expect(log.some((r: any) => r.path === PVCS && r.status === 401)).toBe(
      true,
    );

    expect((await h.http('DELETE', '/_sim/requests')).json()).toEqual({
      cleared: true,
    });
    const after = (await h.http('GET', '/_sim/requests')).json().requests;
    expect(after.filter((r: any) => r.path !== '/_sim/requests')).toEqual([]);
  });

  it('compact makes old versions Expired', async () => {
    const rv = h.sim.store.resourceVersion;
    h.sim.store.create('persistentvolumeclaims', pvc('before-compact'));
    expect(
      (
        await h.http('GET', `${PVCS}?watch=true&resourceVersion=${rv}`, {
          streamMs: 200,
        })
      ).status,
    ).toBe(200);
    expect((await post('/_sim/compact')).json()).toEqual({ compacted: true });
    h.sim.store.create('persistentvolumeclaims', pvc('after-compact'));
    const res = await h.http(
      'GET',
      `${PVCS}?watch=true&resourceVersion=${rv}`,
      { streamMs: 300 },
    );
    expect([res.status, JSON.parse(res.text.trim())]).toEqual([
      200,
      {
        type: 'ERROR',
        object: expect.objectContaining({ code: 410, reason: 'Expired' }),
      },
    ]);
  });

  it('tokens: a new least-privilege token works as granted', async () => {
    const res = await post('/_sim/tokens', {
      user: 'bot',
      rules: [
        {
          apiGroups: [''],
          resources: ['persistentvolumeclaims'],
          verbs: ['list', 'get'],
        },
      ],
      namespaces: ['default'],
    });
    expect(res.status).toBe(200);
    const { token } = res.json();
    expect(typeof token).toBe('string');
    expect((await h.http('GET', PVCS, { token })).status).toBe(200);
    const forbidden = expectStatus(
      await h.http('DELETE', `${PVCS}/existing`, { token }),
      403,
      'Forbidden',
    );
    expect(forbidden.message).toContain('User "bot" cannot delete');
    expectStatus(
      await h.http(
        'GET',
        '/api/v1/namespaces/kube-system/persistentvolumeclaims',
        { token },
      ),
      403,
      'Forbidden',
    );
    expectStatus(
      await h.http('GET', '/_sim/faults', { token }),
      403,
      'Forbidden',
    );

    expectStatus(
      await post('/_sim/tokens', { user: 'no-rules' }),
      400,
      'BadRequest',
    );
    expectStatus(await post('/_sim/tokens', { rules: [] }), 400, 'BadRequest');
  });

  it('refuses non-admin tokens (even with every RBAC right) and anonymous callers', async () => {
    const paths: Array<[string, string]> = [
      ['GET', '/_sim/faults'],
      ['POST', '/_sim/faults'],
      ['DELETE', '/_sim/faults'],
      ['POST', '/_sim/latency'],
      ['POST', '/_sim/watches/drop'],
      ['POST', '/_sim/controllers/pause'],
      ['POST', '/_sim/controllers/resume'],
      ['GET', '/_sim/requests'],
      ['DELETE', '/_sim/requests'],
      ['POST', '/_sim/compact'],
      ['POST', '/_sim/tokens'],
    ];
    const rv = h.sim.store.resourceVersion;
    for (const [method, path] of paths) {
      const body =
        method === 'POST'
          ? { ms: 1000, user: 'x', rules: [], status: 500 }
          : undefined;
      expectStatus(
        await h.http(method, path, {
          token: plainToken,
          ...(body ? { body } : {}),
        }),
        403,
        'Forbidden',
      );
      expectStatus(
        await h.http(method, path, { token: null, ...(body ? { body } : {}) }),
        401,
        'Unauthorized',
      );
    }
    expect(h.sim.faults.list()).toEqual([]);
    expect(h.sim.faults.latencyMs).toBe(0);
    expect(h.sim.store.resourceVersion).toBe(rv);
    // the RBAC-admin token still works on the Kubernetes API
    expect((await h.http('GET', PVCS, { token: plainToken })).status).toBe(200);
  });

  it('unknown admin paths are 404', async () => {
    expectStatus(await h.http('GET', '/_sim/nothing'), 404, 'NotFound');
    expectStatus(await h.http('GET', '/_sim/compact'), 404, 'NotFound');
  });
});

describe('robustness', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({ https: true, controllers: false });
    for (let i = 0; i < 10; i++)
      h.sim.store.create(
        'persistentvolumeclaims',
        pvc(`keep-${i}`, 'default', { labels: { i: String(i) } }),
      );
    h.sim.store.create('apps/statefulsets', statefulSet('web'));
  });

  afterAll(async () => {
    await h?.close();
  });

  it('after a burst of bad requests (over TLS) the simulator still answers and nothing changed', async () => {
    const snapshot = () => ({
      pvcs: h.sim.store.list('persistentvolumeclaims').items,
      sts: h.sim.store.list('apps/statefulsets').items,
      rv: h.sim.store.resourceVersion,
    });
    const before = snapshot();
    const existing = h.sim.store.get(
      'persistentvolumeclaims',
      'default',
      'keep-0',
    )!;
    const bad: Array<() => Promise<RawResponse>> = [
      () => h.http('POST', PVCS, { body: '{not json' }),
      () => h.http('POST', PVCS, { body: '' }),
      () => h.http('POST', PVCS, { body: pvc('Invalid_Name') }),
      () => h.http('POST', PVCS, { body: pvc('keep-1') }),
      () =>
        h.http('POST', PVCS, {
          body: {
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'no-spec' },
          },
        }),
      () =>
        h.http('PUT', `${PVCS}/keep-2`, {
          body: {
            ...existing,
            metadata: {
              ...existing.metadata,
              name: 'keep-2',
              resourceVersion: '1',
            },
          },
        }),
      () => h.http('PUT', `${PVCS}/keep-3`, { body: { ...existing } }),
      () =>
        h.http('PATCH', `${PVCS}/keep-4`, {
          body: '{"metadata":',
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
      () =>
        h.http('PATCH', `${PVCS}/keep-4`, {
          body: [{ op: 'replace', path: '/spec/nothing/here', value: 1 }],
          headers: { 'Content-Type': 'application/json-patch+json' },
        }),
      () =>
        h.http('PATCH', `${PVCS}/keep-4`, {
          body: [
            { op: 'test', path: '/metadata/name', value: 'other' },
            { op: 'remove', path: '/metadata/labels' },
          ],
          headers: { 'Content-Type': 'application/json-patch+json' },
        }),
      () =>
        h.http('PATCH', `${PVCS}/keep-5`, {
          body: { spec: { accessModes: ['ReadWriteMany'] } },
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
      () =>
        h.http('PATCH', '/apis/apps/v1/namespaces/default/statefulsets/web', {
          body: { spec: { replicas: -1 } },
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
      () =>
        h.http('PATCH', '/apis/apps/v1/namespaces/default/statefulsets/web', {
          body: { spec: { serviceName: 'changed' } },
          headers: { 'Content-Type': 'application/merge-patch+json' },
        }),
      () =>
        h.http('DELETE', `${PVCS}/keep-6`, {
          body: { preconditions: { resourceVersion: '1' } },
        }),
      () => h.http('DELETE', `${PVCS}/keep-6`, { body: '{"bad json' }),
      () => h.http('DELETE', `${PVCS}/keep-7`, { token: 'wrong' }),
      () => h.http('DELETE', PVCS, { token: null }),
      () =>
        h.http('GET', `${PVCS}?labelSelector=${encodeURIComponent('a in (')}`),
      () => h.http('GET', `${PVCS}?limit=abc`),
      () => h.http('GET', `${PVCS}?continue=garbage&limit=1`),
      () => h.http('GET', '/api/v1/namespaces/default/bogus'),
      () =>
        h.http('POST', PVCS, {
          body: JSON.stringify(pvc('as-text')),
          headers: { 'Content-Type': 'text/plain' },
        }),
      () =>
        h.http('POST', PVCS, {
          body: {
            kind: 'PersistentVolumeClaim',
            metadata: {
              name: 'x',
              annotations: { big: 'z'.repeat(3.5 * 1024 * 1024) },
            },
          },
        }),
      () =>
        h.http('POST', PVCS, {
          body: { kind: 'PersistentVolumeClaim', metadata: 'not an object' },
        }),
      () =>
        h.http('POST', PVCS, {
          body: { kind: 'PersistentVolumeClaim', metadata: null },
        }),
      () => h.http('POST', PVCS, { body: 'null' }),
      () =>
        h.http('POST', PVCS, {
          body: {
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'weird-spec' },
            spec: 'nope',
          },
        }),
      () =>
        h.http('POST', PVCS, {
          body: {
            kind: 'PersistentVolumeClaim',
            metadata: { name: 'weird-labels', labels: ['a'] },
            spec: {},
          },
        }),
      () =>
        h.http(
          'PUT',
          '/apis/apps/v1/namespaces/default/statefulsets/web/scale',
          { body: { kind: 'Scale', spec: { replicas: 'many' } } },
        ),
    ];
    const responses = await Promise.all(
      Array.from({ length: 6 }, () => bad)
        .flat()
        .map(send => send()),
    );
    const unexpected = responses
      .map((res, i) => ({
        i: i % bad.length,
        status: res.status,
        text: res.text.slice(0, 200),
      }))
      .filter(r => r.status < 400 || r.status >= 500);
    expect(unexpected).toEqual([]);
    for (const res of responses) {
      const body = res.json();
      expect(body).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        code: res.status,
      });
    }

    expect(snapshot()).toEqual(before);
    const version = await h.http('GET', '/version', { token: null });
    expect(version.status).toBe(200);
    const list = await h.http('GET', PVCS);
    expect(list.status).toBe(200);
    expect(list.json().items).toEqual(JSON.parse(JSON.stringify(before.pvcs)));
    expect(list.json().metadata.resourceVersion).toBe(before.rv);
    // and it still writes
    const created = await h.http('POST', PVCS, { body: pvc('after-burst') });
    expect(created.status).toBe(201);
    await eventually(() =>
      h.sim.store.get('persistentvolumeclaims', 'default', 'after-burst'),
    );
  });
});
