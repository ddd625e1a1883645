import { IncomingMessage, ServerResponse } from 'node:http';
import { eventually } from '../__testUtils__/eventually';
import {
  FakeApiRequest,
  startFakeApiServer,
  streamForever,
} from '../__testUtils__/fakeApiServer';
import { ClusterRequestError, KubeGateway } from './KubeGateway';
import { ResponseLimits } from './responseLimits';

/* A broken or hostile API server fails its own cluster, naming the limit, and never holds the backend. */

jest.setTimeout(15000);

const KiB = 1024;

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

/** A gateway for cluster "fake" to a server answering with `handler`. */
async function gatewayTo(
  handler: (req: IncomingMessage, res: ServerResponse, url: URL) => unknown,
  options: { limits?: Partial<ResponseLimits>; timeoutMs?: number } = {},
): Promise<{ gateway: KubeGateway; requests: FakeApiRequest[] }> {
  const fake = await startFakeApiServer(handler);
  stop = fake.close;
  return {
    gateway: new KubeGateway(
      'fake',
      fake.connection,
      options.timeoutMs ?? 5000,
      {
        limits: options.limits,
      },
    ),
    requests: fake.requests,
  };
}

const json = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** A list page with `items` and, unless undefined, a continue token. */
const page = (cont: string | undefined, items: unknown[] = []) => ({
  kind: 'List',
  metadata: { resourceVersion: '7', ...(cont ? { continue: cont } : {}) },
  items,
});

const claim = (i: number) => ({
  metadata: { name: `data-${i}`, namespace: 'shop', uid: `u${i}` },
});

async function failure(
  promise: Promise<unknown>,
): Promise<ClusterRequestError> {
  const error = await promise.then(
    () => undefined,
    e => e,
  );
  expect(error).toBeInstanceOf(ClusterRequestError);
  expect(error.cluster).toBe('fake');
  return error;
}

describe('KubeGateway against a misbehaving API server', () => {
  it('stops a list that never ends (a new continue token on every page) at its page limit', async () => {
    let n = 0;
    const { gateway, requests } = await gatewayTo(
      (_req, res) => json(res, page(`token-${++n}`)),
      { limits: { listPages: 25 } },
    );

    const error = await failure(gateway.listClaims('shop'));

    expect(error.message).toBe(
      'cluster "fake" sent more than 25 pages for list persistentvolumeclaims in shop: no real API server sends that, so pvc-pruner stopped reading (check what answers at that cluster’s URL)',
    );
    expect(error.reason).toBe('LimitExceeded');
    expect(requests).toHaveLength(25);
  });

  it('refuses a continue token it already gave, rather than loop', async () => {
    const tokens = ['a', 'b', 'a', 'b'];
    const { gateway, requests } = await gatewayTo((_req, res) =>
      json(res, page(tokens.shift(), [claim(requests.length)])),
    );

    const error = await failure(gateway.listClaims('shop'));

    expect(error.message).toMatch(
      /^cluster "fake" handed back a continue token it had already given \(the list would never end\) for list persistentvolumeclaims in shop: /,
    );
    expect(requests.map(r => r.query.get('continue'))).toEqual([
      null,
      'a',
      'b',
    ]);
  });

  it('stops a list with more objects than its limit', async () => {
    let n = 0;
    const { gateway, requests } = await gatewayTo(
      (_req, res) =>
        json(
          res,
          page(
            `t${++n}`,
            Array.from({ length: 400 }, (_, i) => claim(n * 400 + i)),
          ),
        ),
      { limits: { listItems: 1000 } },
    );

    const error = await failure(gateway.listPods('shop'));

    expect(error.message).toMatch(
      /^cluster "fake" sent more than 1,000 objects for list pods in shop: /,
    );
    expect(requests).toHaveLength(3);
  });

  it('stops a list whose pages together exceed its byte limit', async () => {
    let n = 0;
    const filler = 'x'.repeat(30 * KiB);
    const { gateway, requests } = await gatewayTo(
      (_req, res) =>
        json(res, page(`t${++n}`, [{ metadata: { name: filler } }])),
      { limits: { listBytes: 100 * KiB } },
    );

    const error = await failure(gateway.listStatefulSets('app=db'));

    expect(error.message).toMatch(
      /^cluster "fake" sent more than 100 KiB for list statefulsets: /,
    );
    expect(requests).toHaveLength(4);
  });

  it('gives a whole list a deadline, though every page comes just within the request timeout', async () => {
    let n = 0;
    const { gateway, requests } = await gatewayTo(
      (_req, res) => {
        setTimeout(() => json(res, page(`slow-${++n}`)), 250);
      },
      { timeoutMs: 600, limits: { listDeadlineMs: 2000 } },
    );

    const started = Date.now();
    const error = await failure(gateway.listClaims('shop'));

    expect(error.message).toBe(
      'cluster "fake" did not finish list persistentvolumeclaims in shop within 2 s, all pages together: no real API server is that slow, so pvc-pruner gave up (check what answers at that cluster’s URL)',
    );
    expect(error).toMatchObject({ statusCode: 504, reason: 'Timeout' });
    expect(Date.now() - started).toBeLessThan(2500);
    // Each page answered within the request timeout: only the deadline stopped it.
    expect(requests.length).toBeGreaterThanOrEqual(5);
  });

  describe('an answer larger than its limit', () => {
    const limits = { objectBytes: 64 * KiB, pageBytes: 256 * KiB };

    it.each([
      ['with a Content-Length', true],
      ['streamed without one, without end', false],
    ])('is refused %s, and its connection closed', async (_how, declared) => {
      const { gateway, requests } = await gatewayTo(
        (_req, res) => {
          res.writeHead(200, {
            'content-type': 'application/json',
            ...(declared
              ? { 'content-length': String(1024 * 1024 * 1024) }
              : {}),
          });
          res.write('{"items":["');
          streamForever(res, 'x'.repeat(16 * KiB));
        },
        { limits },
      );

      const read = await failure(gateway.readVolume('pv-1'));
      expect(read.message).toMatch(
        /^cluster "fake" sent an answer of more than 64 KiB for get persistentvolume pv-1: /,
      );
      const list = await failure(gateway.listClaims('shop'));
      expect(list.message).toMatch(
        /^cluster "fake" sent an answer of more than 256 KiB for list persistentvolumeclaims in shop: /,
      );
      await eventually('both connections closed', () =>
        requests.every(r => r.closedEarly),
      );
    });

    it('is refused for an error answer too (the Status of a refusal)', async () => {
      const { gateway } = await gatewayTo(
        (_req, res) => {
          res.writeHead(403, { 'content-type': 'application/json' });
          streamForever(res, 'x'.repeat(16 * KiB));
        },
        { limits },
      );

      const error = await failure(gateway.readClaim('shop', 'data-0'));

      expect(error.message).toMatch(
        /^cluster "fake" sent an answer of more than 64 KiB for get persistentvolumeclaim shop\/data-0: /,
      );
    });
  });

  describe('a watch', () => {
    const watchFrom = (gateway: KubeGateway) =>
      new Promise<ClusterRequestError | undefined>((resolve, reject) => {
        gateway
          .watchCollection('pods', '7', () => undefined, resolve)
          .catch(reject);
      });

    it.each([
      [
        'one event line without end',
        (res: ServerResponse) => {
          res.write('{"type":"ADDED","object":{"metadata":{"name":"');
          streamForever(res, 'x'.repeat(16 * KiB));
        },
      ],
      [
        'an event far larger than any object',
        (res: ServerResponse) => {
          const name = 'x'.repeat(200 * KiB);
          res.write(
            `${JSON.stringify({
              type: 'ADDED',
              object: { metadata: { name } },
            })}\n`,
          );
        },
      ],
    ])('is ended on %s, naming the limit', async (_what, misbehave) => {
      const seen: unknown[] = [];
      const { gateway, requests } = await gatewayTo(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`${JSON.stringify({ type: 'ADDED', object: claim(1) })}\n`);
          misbehave(res);
        },
        { limits: { watchEventBytes: 64 * KiB } },
      );

      const ended = await new Promise<ClusterRequestError | undefined>(
        (resolve, reject) => {
          gateway
            .watchCollection('pods', '7', e => seen.push(e.object), resolve)
            .catch(reject);
        },
      );

      expect(ended).toBeInstanceOf(ClusterRequestError);
      expect(ended!.message).toMatch(
        /^cluster "fake" sent a watch event of more than 64 KiB for watch \/api\/v1\/pods: no real API server sends that/,
      );
      expect(seen).toEqual([claim(1)]);
      await eventually('the connection closed', () => requests[0].closedEarly);
    });

    it('is ended by a line that is not JSON, rather than lose an event silently', async () => {
      const { gateway } = await gatewayTo((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"type":"ADDED","object":{}}\nnot json\n');
      });

      const ended = await watchFrom(gateway);

      expect(ended?.message).toMatch(
        /^cluster "fake" sent a watch event that is not JSON for watch \/api\/v1\/pods: /,
      );
    });

    it('still follows a well-behaved stream to its end', async () => {
      const events = Array.from({ length: 50 }, (_, i) => ({
        type: 'ADDED',
        object: claim(i),
      }));
      const { gateway } = await gatewayTo(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          // Events split across writes anywhere, as TCP may deliver them.
          const text = events.map(e => `${JSON.stringify(e)}\n`).join('');
          for (let i = 0; i < text.length; i += 7)
            res.write(text.slice(i, i + 7));
          res.end();
        },
        { limits: { watchEventBytes: 1 * KiB } },
      );
      const seen: unknown[] = [];

      const ended = await new Promise<ClusterRequestError | undefined>(
        (resolve, reject) => {
          gateway
            .watchCollection('pods', '7', e => seen.push(e), resolve)
            .catch(reject);
        },
      );

      expect(ended).toBeUndefined();
      expect(seen).toEqual(events);
    });
  });
});
