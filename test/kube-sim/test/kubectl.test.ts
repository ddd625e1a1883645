import { KubeObject } from '../src';
import {
  consistently,
  eventually,
  expectNoDiscoveryWarnings,
  KubectlResult,
  pvc,
  releaseFinalizers,
  SimHarness,
  sleep,
  startHarness,
  statefulSet,
} from './helpers';

jest.setTimeout(30000);

/**
 * kubectl 1.32 (the installed dispatcher picks the client from /version)
 * driving the simulator over https, with default (server) validation.
 * Controllers are off so that every state change seen here is kubectl's own.
 */
describe('kubectl against kube-sim', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({ controllers: false });
  });

  afterAll(async () => {
    await h?.close();
  });

  /** Runs kubectl, expects success and a clean stderr; returns stdout. */
  async function ok(args: string[]): Promise<string> {
    const result = await h.kubectl(args);
    expect({ args, ...result }).toEqual({
      args,
      code: 0,
      stdout: result.stdout,
      stderr: '',
    });
    return result.stdout;
  }

  async function fails(args: string[]): Promise<KubectlResult> {
    const result = await h.kubectl(args);
    expect({ args, code: result.code }).toEqual({ args, code: 1 });
    expectNoDiscoveryWarnings(result.stderr);
    return result;
  }

  const PVC_YAML = (name: string, extra = '') => `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ${name}
  labels:
    app.kubernetes.io/name: kubectl-test
${extra}spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 2Gi
`;

  describe('create, get', () => {
    it('creates objects from a multi-document YAML file with default validation', async () => {
      const file = h.writeFile(
        'create.yaml',
        `${PVC_YAML('data-web-0')}---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels:
    app: web
spec:
  serviceName: web
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: main
        image: registry.example.com/web:1
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 2Gi
`,
      );
      const out = await ok(['create', '-f', file]);
      expect(out.trim().split('\n')).toEqual([
        'persistentvolumeclaim/data-web-0 created',
        'statefulset.apps/web created',
      ]);
      const stored = h.sim.store.get(
        'persistentvolumeclaims',
        'default',
        'data-web-0',
      );
      expect(stored?.spec.resources.requests.storage).toBe('2Gi');
      expect(stored?.metadata.labels).toEqual({
        'app.kubernetes.io/name': 'kubectl-test',
      });
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'web')?.spec.replicas,
      ).toBe(1);
      // kubectl validated against the served OpenAPI v3 document rather than giving up on it
      const openapi = h.sim
        .requests()
        .filter(r => r.path.startsWith('/openapi/v3'));
      expect(openapi.length).toBeGreaterThan(0);
      expect(openapi.every(r => r.status === 200)).toBe(true);
    });

    it('gets an object as JSON', async () => {
      const obj = JSON.parse(
        await ok(['get', 'pvc', 'data-web-0', '-o', 'json']),
      );
      expect(obj.kind).toBe('PersistentVolumeClaim');
      expect(obj.apiVersion).toBe('v1');
      expect(obj.metadata.name).toBe('data-web-0');
      expect(obj.metadata.namespace).toBe('default');
      expect(obj.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
      expect(obj.metadata.uid).toBe(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')
          ?.metadata.uid,
      );
      expect(obj.spec.volumeMode).toBe('Filesystem');
    });

    it('gets a list as JSON', async () => {
      const list = JSON.parse(await ok(['get', 'sts', '-o', 'json']));
      expect(list.kind).toBe('List');
      expect(
        list.items.map((i: any) => `${i.kind}/${i.metadata.name}`),
      ).toEqual(['StatefulSet/web']);
    });

    it('prints tables with the columns kube-apiserver serves', async () => {
      const header = (out: string) =>
        out
          .split('\n')[0]
          .trim()
          .split(/\s{2,}/);
      const pvcs = await ok(['get', 'pvc']);
      expect(header(pvcs)).toEqual([
        'NAME',
        'STATUS',
        'VOLUME',
        'CAPACITY',
        'ACCESS MODES',
        'STORAGECLASS',
        'VOLUMEATTRIBUTESCLASS',
        'AGE',
      ]);
      expect(pvcs.split('\n')[1]).toMatch(/^data-web-0\s+Pending\s+/);

      const sts = await ok(['get', 'sts']);
      expect(header(sts)).toEqual(['NAME', 'READY', 'AGE']);
      expect(sts.split('\n')[1]).toMatch(/^web\s+0\/1\s+\d+s$/);

      const wide = await ok(['get', 'sts', '-o', 'wide']);
      expect(header(wide)).toEqual([
        'NAME',
        'READY',
        'AGE',
        'CONTAINERS',
        'IMAGES',
      ]);
      expect(wide.split('\n')[1]).toMatch(
        /\smain\s+registry\.example\.com\/web:1$/,
      );

      const ns = await ok(['get', 'ns']);
      expect(header(ns)).toEqual(['NAME', 'STATUS', 'AGE']);
      expect(ns).toMatch(/^default\s+Active\s/m);

      const all = await ok(['get', 'sts', '-A']);
      expect(header(all)).toEqual(['NAMESPACE', 'NAME', 'READY', 'AGE']);

      const none = await h.kubectl(['get', 'pods']);
      expect(none.code).toBe(0);
      expect(none.stdout).toBe('');
      expect(none.stderr.trim()).toBe(
        'No resources found in default namespace.',
      );

      // kubectl asked for server-side tables
      const tableRequests = h.sim
        .requests()
        .filter(
          r => r.resource === 'persistentvolumeclaims' && r.verb === 'list',
        );
      expect(tableRequests.some(r => r.query.includes('limit=500'))).toBe(true);
    });

    it('reports a missing object as NotFound', async () => {
      const get = await fails(['get', 'pvc', 'does-not-exist']);
      expect(get.stdout).toBe('');
      expect(get.stderr.trim()).toBe(
        'Error from server (NotFound): persistentvolumeclaims "does-not-exist" not found',
      );
      const sts = await fails(['get', 'sts', 'does-not-exist']);
      expect(sts.stderr.trim()).toBe(
        'Error from server (NotFound): statefulsets.apps "does-not-exist" not found',
      );
      const del = await fails(['delete', 'pvc', 'does-not-exist']);
      expect(del.stderr.trim()).toBe(
        'Error from server (NotFound): persistentvolumeclaims "does-not-exist" not found',
      );
    });

    it('rejects an invalid name with exit code 1 and the 422 message', async () => {
      const file = h.writeFile('invalid.yaml', PVC_YAML('Bad_Name'));
      const result = await fails(['create', '-f', file]);
      expect(result.stderr).toContain(
        'The PersistentVolumeClaim "Bad_Name" is invalid',
      );
      expect(result.stderr).toContain(
        'metadata.name: Invalid value: "Bad_Name"',
      );
      expect(result.stderr).toContain('a lowercase RFC 1123 subdomain');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'Bad_Name'),
      ).toBeUndefined();
    });

    it('rejects a create of an existing object as AlreadyExists', async () => {
      const file = h.writeFile('dup.yaml', PVC_YAML('data-web-0'));
      const result = await fails(['create', '-f', file]);
      expect(result.stderr).toContain('Error from server (AlreadyExists)');
      expect(result.stderr).toContain(
        'persistentvolumeclaims "data-web-0" already exists',
      );
    });
  });

  describe('imperative commands (kubectl sends these as protobuf)', () => {
    it('create namespace', async () => {
      expect((await ok(['create', 'namespace', 'team-a'])).trim()).toBe(
        'namespace/team-a created',
      );
      const created = h.sim.store.get('namespaces', undefined, 'team-a');
      expect(created?.status?.phase).toBe('Active');
      const post = h.sim
        .requests()
        .find(r => r.verb === 'create' && r.resource === 'namespaces');
      expect(post?.status).toBe(201);
    });

    it('run', async () => {
      const out = await ok([
        'run',
        'web',
        '-n',
        'team-a',
        '--image=registry.example.com/web:1',
        '--labels=app=web',
        '--env=MODE=demo',
        '--port=8080',
      ]);
      expect(out.trim()).toBe('pod/web created');
      const pod = h.sim.store.get('pods', 'team-a', 'web');
      expect(pod?.metadata.labels).toEqual({ app: 'web' });
      expect(pod?.spec.containers).toEqual([
        expect.objectContaining({
          name: 'web',
          image: 'registry.example.com/web:1',
          env: [{ name: 'MODE', value: 'demo' }],
          ports: [expect.objectContaining({ containerPort: 8080 })],
        }),
      ]);
    });

    it('debug --copy-to creates the copy through the typed (protobuf) client', async () => {
      await ok([
        'debug',
        'web',
        '-n',
        'team-a',
        '--copy-to=web-debug',
        '--profile=general',
        '--image=busybox:1.36',
        '--container=debugger',
        '--',
        'sleep',
        '1d',
      ]);
      const copy = h.sim.store.get('pods', 'team-a', 'web-debug');
      expect(copy?.spec.containers.map((c: any) => c.name)).toEqual([
        'web',
        'debugger',
      ]);
      expect(copy?.spec.containers[1]).toMatchObject({
        image: 'busybox:1.36',
        command: ['sleep', '1d'],
        securityContext: { capabilities: { add: ['SYS_PTRACE'] } },
      });
      expect(copy?.spec.shareProcessNamespace).toBe(true);
    });

    it('create configmap', async () => {
      expect(
        (
          await ok([
            'create',
            'configmap',
            'settings',
            '-n',
            'team-a',
            '--from-literal=mode=fast',
            '--from-literal=level=3',
          ])
        ).trim(),
      ).toBe('configmap/settings created');
      const created = h.sim.store.get('configmaps', 'team-a', 'settings');
      expect(created?.data).toEqual({ mode: 'fast', level: '3' });
      expect(created?.spec).toBeUndefined();
      const post = h.sim
        .requests()
        .find(r => r.verb === 'create' && r.resource === 'configmaps');
      expect(post?.status).toBe(201);
      expect(
        (await ok(['get', 'cm', 'settings', '-n', 'team-a']))
          .trim()
          .split('\n')
          .map(l => l.split(/\s{2,}/).slice(0, 2)),
      ).toEqual([
        ['NAME', 'DATA'],
        ['settings', '2'],
      ]);
      // kubectl checks --from-literal keys itself; the server checks what a file brings
      const invalid = await h.kubectl(['apply', '-n', 'team-a', '-f', '-'], {
        input:
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  a/b: c\n',
      });
      expect(invalid.code).toBe(1);
      expect(invalid.stderr).toContain(
        'ConfigMap "bad" is invalid: data[a/b]: Invalid value: "a/b": a valid config key must consist of alphanumeric characters',
      );
    });

    it('an immutable configmap keeps its data', async () => {
      await ok([
        'create',
        'configmap',
        'frozen',
        '-n',
        'team-a',
        '--from-literal=mode=fast',
      ]);
      const mergePatch = (patch: string) => [
        'patch',
        'cm',
        'frozen',
        '-n',
        'team-a',
        '--type=merge',
        '-p',
        patch,
      ];
      await ok(mergePatch('{"immutable":true}'));
      const result = await fails(mergePatch('{"data":{"mode":"slow"}}'));
      expect(result.stderr.trim()).toBe(
        'The ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
      );
      expect(h.sim.store.get('configmaps', 'team-a', 'frozen')?.data).toEqual({
        mode: 'fast',
      });
    });

    it('create deployment reaches the read-only resource and says why it is refused', async () => {
      const result = await fails([
        'create',
        'deployment',
        'hello',
        '--image=registry.example.com/web:1',
        '-n',
        'team-a',
      ]);
      expect(result.stderr.trim()).toBe(
        "error: failed to create deployment: the server does not allow this method on the requested resource (create): kube-sim serves deployments.apps read-only and always empty, for clients that list them (such as Backstage's Kubernetes tab)",
      );
    });

    it('logs says there are none, and why, for a pod that exists', async () => {
      const result = await fails(['logs', 'web', '-n', 'team-a']);
      expect(result.stderr.trim()).toBe(
        'Error from server (BadRequest): kube-sim runs no containers, so pod "team-a/web" has no logs',
      );
      const missing = await fails(['logs', 'nothing', '-n', 'team-a']);
      expect(missing.stderr.trim()).toBe(
        'error: error from server (NotFound): pods "nothing" not found in namespace "team-a"',
      );
    });
  });

  describe('writes', () => {
    it('scales a StatefulSet through the scale subresource', async () => {
      const before = h.sim.store.get('apps/statefulsets', 'default', 'web')!;
      expect((await ok(['scale', 'sts', 'web', '--replicas=3'])).trim()).toBe(
        'statefulset.apps/web scaled',
      );
      const after = h.sim.store.get('apps/statefulsets', 'default', 'web')!;
      expect(after.spec.replicas).toBe(3);
      expect(after.metadata.generation).toBe(
        (before.metadata.generation ?? 0) + 1,
      );
      expect(
        h.sim
          .requests()
          .some(r => r.resource === 'statefulsets/scale' && r.status === 200),
      ).toBe(true);

      // --current-replicas is a precondition checked against the Scale
      const stale = await fails([
        'scale',
        'sts',
        'web',
        '--current-replicas=7',
        '--replicas=1',
      ]);
      expect(stale.stderr).toContain('Expected replicas to be 7, was 3');
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'web')!.spec.replicas,
      ).toBe(3);

      expect(
        (
          await ok([
            'scale',
            'sts',
            'web',
            '--current-replicas=3',
            '--replicas=2',
          ])
        ).trim(),
      ).toBe('statefulset.apps/web scaled');
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'web')!.spec.replicas,
      ).toBe(2);
    });

    it('labels and unlabels, honouring --overwrite', async () => {
      expect(
        (await ok(['label', 'pvc', 'data-web-0', 'tier=gold'])).trim(),
      ).toBe('persistentvolumeclaim/data-web-0 labeled');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!
          .metadata.labels?.tier,
      ).toBe('gold');

      const clash = await fails(['label', 'pvc', 'data-web-0', 'tier=silver']);
      expect(clash.stderr.trim()).toBe(
        "error: 'tier' already has a value (gold), and --overwrite is false",
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!
          .metadata.labels?.tier,
      ).toBe('gold');

      await ok(['label', 'pvc', 'data-web-0', 'tier=silver', '--overwrite']);
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!
          .metadata.labels?.tier,
      ).toBe('silver');

      await ok(['label', 'pvc', 'data-web-0', 'tier-']);
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!
          .metadata.labels,
      ).toEqual({
        'app.kubernetes.io/name': 'kubectl-test',
      });

      // a label selector on get sees labels set by kubectl
      await ok(['label', 'sts', 'web', 'team=payments']);
      expect(
        (await ok(['get', 'sts', '-l', 'team=payments', '-o', 'name'])).trim(),
      ).toBe('statefulset.apps/web');
      expect(
        (await ok(['get', 'sts', '-l', 'team!=payments', '-o', 'name'])).trim(),
      ).toBe('');
    });

    it('annotates', async () => {
      expect(
        (
          await ok([
            'annotate',
            'pvc',
            'data-web-0',
            'example.com/owner=team-a',
          ])
        ).trim(),
      ).toBe('persistentvolumeclaim/data-web-0 annotated');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!
          .metadata.annotations,
      ).toEqual({
        'example.com/owner': 'team-a',
      });
      await ok(['annotate', 'pvc', 'data-web-0', 'example.com/owner-']);
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!
          .metadata.annotations ?? {},
      ).toEqual({});
    });

    it('patches with --type=merge', async () => {
      const out = await ok([
        'patch',
        'pvc',
        'data-web-0',
        '--type=merge',
        '-p',
        '{"metadata":{"labels":{"merged":"yes"}}}',
      ]);
      expect(out.trim()).toBe('persistentvolumeclaim/data-web-0 patched');
      const labels = h.sim.store.get(
        'persistentvolumeclaims',
        'default',
        'data-web-0',
      )!.metadata.labels;
      expect(labels).toEqual({
        'app.kubernetes.io/name': 'kubectl-test',
        merged: 'yes',
      });
      // a patch that changes nothing is not a write (kube-apiserver skips no-op updates), so kubectl says so
      const again = await ok([
        'patch',
        'pvc',
        'data-web-0',
        '--type=merge',
        '-p',
        '{"metadata":{"labels":{"merged":"yes"}}}',
      ]);
      expect(again.trim()).toBe(
        'persistentvolumeclaim/data-web-0 patched (no change)',
      );
    });

    it('patches with --type=json', async () => {
      const out = await ok([
        'patch',
        'sts',
        'web',
        '--type=json',
        '-p',
        '[{"op":"replace","path":"/spec/replicas","value":5},{"op":"add","path":"/metadata/labels/patched","value":"json"}]',
      ]);
      expect(out.trim()).toBe('statefulset.apps/web patched');
      const sts = h.sim.store.get('apps/statefulsets', 'default', 'web')!;
      expect(sts.spec.replicas).toBe(5);
      expect(sts.metadata.labels?.patched).toBe('json');

      // a failing test op changes nothing and fails the command
      const failed = await h.kubectl([
        'patch',
        'sts',
        'web',
        '--type=json',
        '-p',
        '[{"op":"test","path":"/spec/replicas","value":4},{"op":"replace","path":"/spec/replicas","value":0}]',
      ]);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toMatch(/invalid|test/i);
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'web')!.spec.replicas,
      ).toBe(5);
    });

    it('patches with the default (strategic merge) type', async () => {
      await ok([
        'patch',
        'pvc',
        'data-web-0',
        '-p',
        '{"metadata":{"annotations":{"strategic":"yes"}}}',
      ]);
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!
          .metadata.annotations?.strategic,
      ).toBe('yes');
    });

    it('refuses a spec change of a PVC as Invalid', async () => {
      const result = await fails([
        'patch',
        'pvc',
        'data-web-0',
        '--type=merge',
        '-p',
        '{"spec":{"accessModes":["ReadWriteMany"]}}',
      ]);
      expect(result.stderr).toContain('is invalid');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'data-web-0')!.spec
          .accessModes,
      ).toEqual(['ReadWriteOnce']);
    });
  });

  describe('--dry-run=server', () => {
    it('creates nothing', async () => {
      const rv = h.sim.store.resourceVersion;
      const file = h.writeFile('dry.yaml', PVC_YAML('dry-run-claim'));
      const out = await ok(['create', '-f', file, '--dry-run=server']);
      expect(out.trim()).toBe(
        'persistentvolumeclaim/dry-run-claim created (server dry run)',
      );
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'dry-run-claim'),
      ).toBeUndefined();
      expect(h.sim.store.resourceVersion).toBe(rv);
      const get = await fails(['get', 'pvc', 'dry-run-claim']);
      expect(get.stderr).toContain('not found');
    });

    it('deletes, scales and labels nothing', async () => {
      const before = h.sim.store.get('apps/statefulsets', 'default', 'web')!;
      expect(
        (await ok(['delete', 'sts', 'web', '--dry-run=server'])).trim(),
      ).toBe('statefulset.apps "web" deleted (server dry run)');
      expect(
        (
          await ok(['scale', 'sts', 'web', '--replicas=9', '--dry-run=server'])
        ).trim(),
      ).toBe('statefulset.apps/web scaled (server dry run)');
      expect(
        (
          await ok(['label', 'sts', 'web', 'dry=run', '--dry-run=server'])
        ).trim(),
      ).toBe('statefulset.apps/web labeled (server dry run)');
      const after = h.sim.store.get('apps/statefulsets', 'default', 'web')!;
      expect(after).toBe(before);
      expect(after.metadata.deletionTimestamp).toBeUndefined();
    });
  });

  describe('watch', () => {
    it('get -w prints the current rows, then changes as they happen', async () => {
      await ok(['create', '-f', h.writeFile('w1.yaml', PVC_YAML('watched-1'))]);
      const watch = h.spawnKubectl([
        'get',
        'pvc',
        '-w',
        '-l',
        'app.kubernetes.io/name=kubectl-test',
      ]);
      try {
        await eventually(() => /^watched-1\s+Pending/m.test(watch.stdout()), {
          message: 'initial rows',
        });
        expect(watch.stdout().split('\n')[0]).toMatch(
          /^NAME\s+STATUS\s+VOLUME/,
        );

        h.sim.store.create(
          'persistentvolumeclaims',
          pvc('watched-2', 'default', {
            labels: { 'app.kubernetes.io/name': 'kubectl-test' },
          }),
        );
        await eventually(() => /^watched-2\s+Pending/m.test(watch.stdout()), {
          message: 'added row',
        });

        // a claim without the label is filtered by the server-side selector
        h.sim.store.create('persistentvolumeclaims', pvc('unlabelled'));
        // a delete shows up as a Terminating row (the finalizer keeps it)
        await ok(['delete', 'pvc', 'watched-2', '--wait=false']);
        await eventually(
          () => /^watched-2\s+Terminating/m.test(watch.stdout()),
          { message: 'terminating row' },
        );
        expect(watch.stdout()).not.toContain('unlabelled');
        expect(watch.child.exitCode).toBeNull();
      } finally {
        watch.kill();
      }
      const exit = await watch.exited;
      expect(exit.signal ?? exit.code).toBeTruthy();
      expectNoDiscoveryWarnings(watch.stderr());
    });

    it('get -w --output-watch-events -o json streams typed events', async () => {
      const watch = h.spawnKubectl([
        'get',
        'sts',
        'web',
        '-w',
        '--output-watch-events',
        '-o',
        'json',
      ]);
      try {
        const events = () =>
          watch
            .stdout()
            .split('\n')
            .filter(Boolean)
            .map(line => JSON.parse(line));
        await eventually(() => events().length === 1, {
          message: 'initial ADDED',
        });
        await ok(['label', 'sts', 'web', 'watched=yes']);
        await eventually(() => events().length === 2, {
          message: 'MODIFIED event',
        });
        await sleep(200);
        // the object once (the watch's own initial event is dropped by kubectl), then the change
        expect(
          events().map(e => [
            e.type,
            e.object.metadata.name,
            e.object.metadata.labels.watched,
          ]),
        ).toEqual([
          ['ADDED', 'web', undefined],
          ['MODIFIED', 'web', 'yes'],
        ]);
      } finally {
        watch.kill();
      }
      await watch.exited;
      expectNoDiscoveryWarnings(watch.stderr());
    });
  });

  describe('deletion', () => {
    it('delete --wait returns once a finalizer is released', async () => {
      await ok([
        'create',
        '-f',
        h.writeFile('del.yaml', PVC_YAML('to-delete')),
      ]);
      const del = h.spawnKubectl([
        'delete',
        'pvc',
        'to-delete',
        '--wait',
        '--timeout=20s',
      ]);
      const marked = await eventually(
        () =>
          h.sim.store.get('persistentvolumeclaims', 'default', 'to-delete')
            ?.metadata.deletionTimestamp,
        {
          message: 'deletionTimestamp',
        },
      );
      expect(marked).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      // the finalizer holds the claim, so kubectl keeps waiting
      await sleep(300);
      expect(del.child.exitCode).toBeNull();
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'to-delete'),
      ).toBeDefined();

      releaseFinalizers(
        h.sim,
        'persistentvolumeclaims',
        'default',
        'to-delete',
      );
      const exit = await del.exited;
      expect(exit.code).toBe(0);
      expect(del.stdout().trim()).toBe(
        'persistentvolumeclaim "to-delete" deleted',
      );
      expectNoDiscoveryWarnings(del.stderr());
      expect(del.stderr()).toBe('');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'to-delete'),
      ).toBeUndefined();
      // kubectl waited with a watch pinned to the name
      expect(
        h.sim
          .requests()
          .some(
            r =>
              r.verb === 'watch' &&
              r.resource === 'persistentvolumeclaims' &&
              decodeURIComponent(r.query).includes('metadata.name=to-delete'),
          ),
      ).toBe(true);
    });

    it('delete --wait times out while the finalizer stays', async () => {
      await ok(['create', '-f', h.writeFile('stuck.yaml', PVC_YAML('stuck'))]);
      const result = await h.kubectl([
        'delete',
        'pvc',
        'stuck',
        '--timeout=1s',
      ]);
      expect(result.code).toBe(1);
      expect(result.stdout.trim()).toBe(
        'persistentvolumeclaim "stuck" deleted',
      );
      expect(result.stderr).toContain('timed out waiting for the condition');
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'stuck')?.metadata
          .deletionTimestamp,
      ).toBeDefined();
      releaseFinalizers(h.sim, 'persistentvolumeclaims', 'default', 'stuck');
    });

    it('wait --for=delete returns when the object goes away', async () => {
      h.sim.store.create('persistentvolumeclaims', pvc('awaited'));
      await ok(['delete', 'pvc', 'awaited', '--wait=false']);
      const wait = h.spawnKubectl([
        'wait',
        '--for=delete',
        'pvc/awaited',
        '--timeout=20s',
      ]);
      // Once kubectl has listed the claim it watches from that list's
      // resourceVersion, so it sees the deletion however late its watch starts.
      await eventually(
        () =>
          h.sim
            .requests()
            .some(
              r =>
                r.verb === 'list' &&
                r.resource === 'persistentvolumeclaims' &&
                decodeURIComponent(r.query).includes('metadata.name=awaited'),
            ),
        { timeoutMs: 15000, message: 'kubectl wait to list the claim' },
      );
      expect(wait.child.exitCode).toBeNull();
      releaseFinalizers(h.sim, 'persistentvolumeclaims', 'default', 'awaited');
      const exit = await wait.exited;
      expect(exit.code).toBe(0);
      expect(wait.stdout().trim()).toBe(
        'persistentvolumeclaim/awaited condition met',
      );
      expectNoDiscoveryWarnings(wait.stderr());
      expect(
        h.sim.store.get('persistentvolumeclaims', 'default', 'awaited'),
      ).toBeUndefined();
    });

    it('wait --for=jsonpath sees a status change', async () => {
      h.sim.store.create('persistentvolumeclaims', pvc('to-bind'));
      const wait = h.spawnKubectl([
        'wait',
        '--for=jsonpath={.status.phase}=Bound',
        'pvc/to-bind',
        '--timeout=20s',
      ]);
      await sleep(400);
      expect(wait.child.exitCode).toBeNull();
      const current = h.sim.store.get(
        'persistentvolumeclaims',
        'default',
        'to-bind',
      )!;
      h.sim.store.update('persistentvolumeclaims', {
        ...current,
        status: { phase: 'Bound' },
      });
      const exit = await wait.exited;
      expect(exit.code).toBe(0);
      expect(wait.stdout().trim()).toBe(
        'persistentvolumeclaim/to-bind condition met',
      );
    });

    it('deletes a StatefulSet and reports it', async () => {
      h.sim.store.create('apps/statefulsets', statefulSet('short-lived'));
      expect((await ok(['delete', 'sts', 'short-lived'])).trim()).toBe(
        'statefulset.apps "short-lived" deleted',
      );
      expect(
        h.sim.store.get('apps/statefulsets', 'default', 'short-lived'),
      ).toBeUndefined();
    });
  });

  describe('HorizontalPodAutoscalers (autoscaling/v2)', () => {
    const HPA_YAML = (
      maxReplicas: number | string,
      extra = '',
    ) => `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: StatefulSet
    name: web
  minReplicas: 2
  maxReplicas: ${maxReplicas}
${extra}  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 70
`;

    it('apply creates one, a second apply of the same file leaves it unchanged, a changed file configures it', async () => {
      const file = h.writeFile('hpa.yaml', HPA_YAML(5));
      expect((await ok(['apply', '-f', file])).trim()).toBe(
        'horizontalpodautoscaler.autoscaling/web created',
      );
      const created = h.sim.store.get(
        'autoscaling/horizontalpodautoscalers',
        'default',
        'web',
      )!;
      expect(created.spec).toMatchObject({
        scaleTargetRef: {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'web',
        },
        minReplicas: 2,
        maxReplicas: 5,
      });
      expect(created.status).toEqual({ desiredReplicas: 0 });

      h.sim.clearRequests();
      expect((await ok(['apply', '-f', file])).trim()).toBe(
        'horizontalpodautoscaler.autoscaling/web unchanged',
      );
      expect(h.sim.requests().filter(r => r.verb === 'patch')).toEqual([]);
      expect(
        h.sim.store.get(
          'autoscaling/horizontalpodautoscalers',
          'default',
          'web',
        )?.metadata.resourceVersion,
      ).toBe(created.metadata.resourceVersion);

      const raised = h.writeFile('hpa-raised.yaml', HPA_YAML(8));
      expect((await ok(['apply', '-f', raised])).trim()).toBe(
        'horizontalpodautoscaler.autoscaling/web configured',
      );
      expect(
        h.sim.store.get(
          'autoscaling/horizontalpodautoscalers',
          'default',
          'web',
        )?.spec.maxReplicas,
      ).toBe(8);
    });

    it('get hpa prints the columns kube-apiserver serves', async () => {
      const out = await ok(['get', 'hpa']);
      const [header, row] = out.trim().split('\n');
      expect(header.trim().split(/\s{2,}/)).toEqual([
        'NAME',
        'REFERENCE',
        'TARGETS',
        'MINPODS',
        'MAXPODS',
        'REPLICAS',
        'AGE',
      ]);
      expect(row.trim().split(/\s{2,}/)).toEqual([
        'web',
        'StatefulSet/web',
        'cpu: <unknown>/70%',
        '2',
        '8',
        '0',
        expect.stringMatching(/^\d+s$/),
      ]);
      const json = JSON.parse(await ok(['get', 'hpa', 'web', '-o', 'json']));
      expect(json).toMatchObject({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web', namespace: 'default' },
        spec: { maxReplicas: 8 },
      });
    });

    it('defaults minReplicas to 1 and the metrics to 80% CPU, as autoscaling/v2 does', async () => {
      await ok([
        'apply',
        '-f',
        h.writeFile(
          'hpa-bare.yaml',
          `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: bare
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: web}
  maxReplicas: 3
`,
        ),
      ]);
      expect(
        (await ok(['get', 'hpa', 'bare', '--no-headers']))
          .trim()
          .split(/\s{2,}/),
      ).toEqual([
        'bare',
        'StatefulSet/web',
        'cpu: <unknown>/80%',
        '1',
        '3',
        '0',
        expect.stringMatching(/^\d+s$/),
      ]);
      await ok(['delete', 'hpa', 'bare']);
    });

    it.each([
      [
        'a maxReplicas of 0',
        HPA_YAML(0),
        [
          'spec.maxReplicas: Invalid value: 0: must be greater than 0',
          'spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`',
        ],
      ],
      [
        'a maxReplicas below minReplicas',
        HPA_YAML(1),
        [
          'spec.maxReplicas: Invalid value: 1: must be greater than or equal to `minReplicas`',
        ],
      ],
      [
        'a minReplicas of 0',
        HPA_YAML(3).replace('minReplicas: 2', 'minReplicas: 0'),
        [
          'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
        ],
      ],
      [
        'a target without a name',
        HPA_YAML(3).replace('    name: web\n', ''),
        ['spec.scaleTargetRef.name: Required value'],
      ],
    ])('refuses %s, as kube-apiserver does', async (_what, yaml, messages) => {
      const result = await fails([
        'apply',
        '-f',
        h.writeFile(
          'hpa-invalid.yaml',
          yaml.replace('name: web\nspec', 'name: bad\nspec'),
        ),
      ]);
      expect(result.stderr).toContain(
        'The HorizontalPodAutoscaler "bad" is invalid',
      );
      for (const message of messages) expect(result.stderr).toContain(message);
      expect(
        h.sim.store.get(
          'autoscaling/horizontalpodautoscalers',
          'default',
          'bad',
        ),
      ).toBeUndefined();
    });

    it('deletes one', async () => {
      expect((await ok(['delete', 'hpa', 'web'])).trim()).toBe(
        'horizontalpodautoscaler.autoscaling "web" deleted',
      );
      expect(
        h.sim.store.get(
          'autoscaling/horizontalpodautoscalers',
          'default',
          'web',
        ),
      ).toBeUndefined();
    });
  });

  it('never printed discovery or OpenAPI warnings and served discovery with 200s', () => {
    const discovery = h.sim
      .requests()
      .filter(
        r =>
          r.path === '/api' ||
          r.path === '/apis' ||
          r.path.startsWith('/openapi/v3'),
      );
    expect(discovery.length).toBeGreaterThan(0);
    expect(discovery.filter(r => r.status !== 200)).toEqual([]);
    // kube-sim serves OpenAPI v3 only. A client-side apply to an existing
    // object asks for v2 for its patch's merge keys and, on the 404, builds
    // the patch from kubectl's own types, without a warning (every ok() above
    // checks that stderr is empty).
    const otherOpenApi = h.sim
      .requests()
      .filter(
        r =>
          r.path.startsWith('/openapi/') && !r.path.startsWith('/openapi/v3'),
      )
      .map(r => `${r.path} ${r.status}`);
    expect(new Set(otherOpenApi)).toEqual(
      new Set(otherOpenApi.length ? ['/openapi/v2 404'] : []),
    );
  });
});

/** `kubectl describe` with the controllers running, so there are events to show. */
describe('kubectl describe shows the events the controllers record', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({ timeFactor: 0.01 });
    h.sim.store.create('storage.k8s.io/storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'standard' } as KubeObject['metadata'],
      provisioner: 'sim.csi.k8s.io',
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'Immediate',
    });
    h.sim.store.create(
      'apps/statefulsets',
      statefulSet('web', 'default', { storageClassName: 'standard' }),
    );
    await eventually(
      () =>
        h.sim.store.get('pods', 'default', 'web-0')?.status?.phase ===
        'Running',
      { message: 'web-0 running' },
    );
  });

  afterAll(async () => {
    await h?.close();
  });

  /** The rows of the Events table at the end of `kubectl describe`, as [type, reason, from, message]. */
  async function describedEvents(args: string[]): Promise<string[][]> {
    const result = await h.kubectl(['describe', ...args]);
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    const lines = result.stdout.split('\n');
    const start = lines.findIndex(l => l.startsWith('Events:'));
    expect(lines[start]).not.toMatch(/<none>/);
    return lines
      .slice(start + 3)
      .filter(l => l.trim())
      .map(l => {
        const [type, reason, , from, ...message] = l.trim().split(/\s{2,}/);
        return [type, reason, from, message.join('  ')];
      });
  }

  it('describe pvc', async () => {
    const claim = h.sim.store.get(
      'persistentvolumeclaims',
      'default',
      'data-web-0',
    )!;
    expect(await describedEvents(['pvc', 'data-web-0'])).toEqual([
      [
        'Normal',
        'ExternalProvisioning',
        'persistentvolume-controller',
        "Waiting for a volume to be created either by the external provisioner 'sim.csi.k8s.io' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
      ],
      [
        'Normal',
        'Provisioning',
        expect.stringMatching(/^sim\.csi\.k8s\.io_sim-node-1_/),
        'External provisioner is provisioning volume for claim "default/data-web-0"',
      ],
      [
        'Normal',
        'ProvisioningSucceeded',
        expect.stringMatching(/^sim\.csi\.k8s\.io_sim-node-1_/),
        `Successfully provisioned volume pvc-${claim.metadata.uid}`,
      ],
    ]);
    // kubectl asked with the involvedObject field selector (terms in any order), and got a 200
    const list = h.sim
      .requests()
      .filter(r => r.resource === 'events' && r.verb === 'list')
      .at(-1)!;
    expect(list.status).toBe(200);
    const terms = new URLSearchParams(list.query)
      .get('fieldSelector')!
      .split(',');
    expect(terms.sort()).toEqual([
      'involvedObject.kind=PersistentVolumeClaim',
      'involvedObject.name=data-web-0',
      'involvedObject.namespace=default',
      `involvedObject.uid=${claim.metadata.uid}`,
    ]);
  });

  it('describe pod', async () => {
    expect(await describedEvents(['pod', 'web-0'])).toEqual([
      // as on a cluster: the pod waits for its claim to be provisioned
      [
        'Warning',
        'FailedScheduling',
        'default-scheduler',
        '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
      ],
      [
        'Normal',
        'Scheduled',
        'default-scheduler',
        'Successfully assigned default/web-0 to sim-node-1',
      ],
      [
        'Normal',
        'Pulled',
        'kubelet',
        'Container image "registry.example.com/app:1" already present on machine',
      ],
      ['Normal', 'Created', 'kubelet', 'Created container main'],
      ['Normal', 'Started', 'kubelet', 'Started container main'],
    ]);
  });

  it('kubectl events --for', async () => {
    const result = await h.kubectl(['events', '--for', 'pvc/data-web-0']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(
      result.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map(l => l.split(/\s{2,}/).slice(1, 4)),
    ).toEqual([
      ['Normal', 'ExternalProvisioning', 'PersistentVolumeClaim/data-web-0'],
      ['Normal', 'Provisioning', 'PersistentVolumeClaim/data-web-0'],
      ['Normal', 'ProvisioningSucceeded', 'PersistentVolumeClaim/data-web-0'],
    ]);
  });

  it('describe statefulset, and the pod stopping on a scale-down', async () => {
    const pod = h.sim.store.get('pods', 'default', 'web-0')!;
    expect(
      (await h.kubectl(['scale', 'sts', 'web', '--replicas=0'])).code,
    ).toBe(0);
    await eventually(() => !h.sim.store.get('pods', 'default', 'web-0'), {
      message: 'web-0 gone',
    });
    expect(await describedEvents(['sts', 'web'])).toEqual([
      [
        'Normal',
        'SuccessfulCreate',
        'statefulset-controller',
        'create Claim data-web-0 Pod web-0 in StatefulSet web success',
      ],
      [
        'Normal',
        'SuccessfulCreate',
        'statefulset-controller',
        'create Pod web-0 in StatefulSet web successful',
      ],
      [
        'Normal',
        'SuccessfulDelete',
        'statefulset-controller',
        'delete Pod web-0 in StatefulSet web successful',
      ],
    ]);
    const events = await h.kubectl([
      'get',
      'events',
      `--field-selector=involvedObject.uid=${pod.metadata.uid},reason=Killing`,
      '-o',
      'jsonpath={.items[*].message}',
    ]);
    expect(events).toMatchObject({
      code: 0,
      stdout: 'Stopping container main',
    });
  });
});

/**
 * Issue 19's reclaim of a Retain volume, by hand as platform teams do it:
 * `kubectl patch pv … Delete` on a Released volume, against the simulator's
 * PV controller and provisioner (controllers on).
 */
describe('kubectl patch of a volume reclaim policy to Delete', () => {
  let h: SimHarness;
  const volumeOf = (claim: string) =>
    h.sim.store.get('persistentvolumeclaims', 'default', claim)!.spec
      .volumeName as string;
  const phaseOf = (pv: string) =>
    h.sim.store.get('persistentvolumes', undefined, pv)?.status?.phase;

  async function ok(args: string[]): Promise<string> {
    const result = await h.kubectl(args);
    expect({ args, code: result.code, stderr: result.stderr }).toEqual({
      args,
      code: 0,
      stderr: '',
    });
    return result.stdout;
  }
  const listedVolumes = async () =>
    (await ok(['get', 'pv', '-o', 'name'])).trim().split('\n');
  const toDelete = (pv: string) =>
    ok([
      'patch',
      'pv',
      pv,
      '-p',
      '{"spec":{"persistentVolumeReclaimPolicy":"Delete"}}',
    ]);

  beforeAll(async () => {
    h = await startHarness({ timeFactor: 0.01, recordHistory: true });
    h.sim.store.create('storage.k8s.io/storageclasses', {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'keep' } as KubeObject['metadata'],
      provisioner: 'sim.csi.k8s.io',
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'Immediate',
    });
    for (const name of ['released-0', 'bound-0'])
      h.sim.store.create(
        'persistentvolumeclaims',
        pvc(name, 'default', { storageClassName: 'keep' }),
      );
    // A statically provisioned volume (no provisioned-by annotation), pre-bound to its claim.
    h.sim.store.create('persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'static-pv' } as KubeObject['metadata'],
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        csi: { driver: 'sim.csi.k8s.io', volumeHandle: 'vol-static' },
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: '',
        claimRef: { namespace: 'default', name: 'static-0' },
      },
    });
    const staticClaim = pvc('static-0', 'default');
    staticClaim.spec.storageClassName = '';
    staticClaim.spec.volumeName = 'static-pv';
    h.sim.store.create('persistentvolumeclaims', staticClaim);
    await eventually(
      () =>
        ['released-0', 'bound-0', 'static-0'].every(
          c =>
            h.sim.store.get('persistentvolumeclaims', 'default', c)?.status
              ?.phase === 'Bound',
        ),
      { message: 'claims bound' },
    );
    await ok(['delete', 'pvc', 'released-0', 'static-0']);
    await eventually(
      () =>
        phaseOf(volumeOf('bound-0')) === 'Bound' &&
        phaseOf('static-pv') === 'Released' &&
        h.sim.store
          .list('persistentvolumes')
          .items.filter(pv => pv.status?.phase === 'Released').length === 2,
      { message: 'volumes released' },
    );
  });

  afterAll(async () => {
    await h?.close();
  });

  it('deletes a Released, dynamically provisioned volume: kubectl get pv no longer lists it', async () => {
    const released = h.sim.store
      .list('persistentvolumes')
      .items.find(pv => pv.spec.claimRef?.name === 'released-0')!;
    const name = released.metadata.name;
    expect(await listedVolumes()).toContain(`persistentvolume/${name}`);
    await sleep(100);
    expect(phaseOf(name)).toBe('Released');

    expect((await toDelete(name)).trim()).toBe(
      `persistentvolume/${name} patched`,
    );
    await eventually(
      async () => !(await listedVolumes()).includes(`persistentvolume/${name}`),
      { message: `${name} gone from kubectl get pv` },
    );
    const gone = await h.kubectl(['get', 'pv', name]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(
      `Error from server (NotFound): persistentvolumes "${name}" not found`,
    );

    // The oracle's record: the provisioner deleted it Released, to its old claim, after kubectl's patch.
    const [deletion] = h.sim
      .history!.volumeDeletions()
      .filter(d => d.name === name);
    expect(deletion).toMatchObject({
      uid: released.metadata.uid,
      by: 'controller',
      phase: 'Released',
      reclaimPolicy: 'Delete',
      provisionedBy: 'sim.csi.k8s.io',
      claimRef: { name: 'released-0', uid: released.spec.claimRef.uid },
      policyChange: {
        from: 'Retain',
        to: 'Delete',
        phase: 'Released',
        request: {
          verb: 'patch',
          name,
          userAgent: expect.stringMatching(/^kubectl/),
        },
      },
    });
  });

  it('leaves a Bound volume patched to Delete with its claim', async () => {
    const name = volumeOf('bound-0');
    await toDelete(name);
    await consistently(
      () =>
        phaseOf(name) === 'Bound' &&
        !h.sim.store.get('persistentvolumes', undefined, name)!.metadata
          .deletionTimestamp,
      300,
      `${name} bound`,
    );
    expect(await listedVolumes()).toContain(`persistentvolume/${name}`);
    expect(
      (
        await ok([
          'get',
          'pvc',
          'bound-0',
          '-o',
          'jsonpath={.status.phase} {.spec.volumeName}',
        ])
      ).trim(),
    ).toBe(`Bound ${name}`);
    expect(
      h.sim.history!.volumeDeletions().filter(d => d.name === name),
    ).toEqual([]);
  });

  it('fails a statically provisioned volume patched to Delete, and keeps it', async () => {
    await toDelete('static-pv');
    await eventually(() => phaseOf('static-pv') === 'Failed', {
      message: 'static-pv failed',
    });
    await sleep(300);
    expect(
      (
        await ok([
          'get',
          'pv',
          'static-pv',
          '-o',
          'jsonpath={.status.phase}: {.status.message}',
        ])
      ).trim(),
    ).toBe(
      'Failed: error getting deleter volume plugin for volume "static-pv": no deletable volume plugin matched',
    );
    const described = await ok(['describe', 'pv', 'static-pv']);
    expect(described).toMatch(
      /Warning\s+VolumeFailedDelete\s+.*persistentvolume-controller\s+error getting deleter volume plugin for volume "static-pv"/,
    );
    expect(
      h.sim.history!.volumeDeletions().filter(d => d.name === 'static-pv'),
    ).toEqual([]);
  });
});
