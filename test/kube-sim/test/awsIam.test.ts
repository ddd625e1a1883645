import { Sha256 } from '@aws-crypto/sha256-js';
import { ConfigReader } from '@backstage/config';
import { AwsIamStrategy } from '@backstage/plugin-kubernetes-backend';
import { SignatureV4 } from '@smithy/signature-v4';
import {
  AWS_ACCOUNT,
  AWS_CLUSTER,
  AWS_USER_ARN,
  AWS_USER_KEY,
  PVCS,
  refusalReason,
  groupBinding,
} from './authFixtures';
import { SimHarness, sleep, startHarness } from './helpers';

jest.setTimeout(30000);

const SESSION_KEY = {
  accessKeyId: 'ASIAY34FZKBOKMUTVV7A',
  secretAccessKey: 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE+session/token==',
};
const UNMAPPED_KEY = {
  accessKeyId: 'AKIAUNMAPPEDEXAMPLE1',
  secretAccessKey: 'unmapped/secret/EXAMPLEKEY',
};

/** A token exactly as AwsIamStrategy builds it, with a chosen signing time, cluster and lifetime. */
async function presignToken(
  options: {
    credentials?: {
      accessKeyId: string;
      secretAccessKey: string;
      sessionToken?: string;
    };
    clusterId?: string | null;
    signingDate?: Date;
    expiresIn?: number;
    region?: string;
    host?: string;
  } = {},
) {
  const region = options.region ?? 'us-east-1';
  const host = options.host ?? `sts.${region}.amazonaws.com`;
  const signer = new SignatureV4({
    credentials: options.credentials ?? AWS_USER_KEY,
    region,
    service: 'sts',
    sha256: Sha256,
  });
  const clusterId =
    options.clusterId === undefined ? AWS_CLUSTER : options.clusterId;
  const request = await signer.presign(
    {
      headers: {
        host,
        ...(clusterId !== null ? { 'x-k8s-aws-id': clusterId } : {}),
      },
      hostname: host,
      method: 'GET',
      path: '/',
      protocol: 'https:',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    },
    { expiresIn: options.expiresIn ?? 0, signingDate: options.signingDate },
  );
  const query = Object.entries(request.query ?? {})
    .map(
      ([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`,
    )
    .join('&');
  return `k8s-aws-v1.${Buffer.from(`https://${host}/?${query}`).toString(
    'base64url',
  )}`;
}

/** Decodes a token's URL, lets `edit` change it, and encodes it again. */
function editToken(token: string, edit: (url: URL) => void) {
  const url = new URL(
    Buffer.from(token.slice('k8s-aws-v1.'.length), 'base64url').toString(),
  );
  edit(url);
  return `k8s-aws-v1.${Buffer.from(url.toString()).toString('base64url')}`;
}

const minutesAgo = (m: number) => new Date(Date.now() - m * 60 * 1000);

describe('AWS IAM authenticator tokens', () => {
  let h: SimHarness;

  beforeAll(async () => {
    h = await startHarness({
      auth: {
        aws: {
          clusterId: AWS_CLUSTER,
          identities: [
            { ...AWS_USER_KEY, arn: AWS_USER_ARN },
            {
              ...SESSION_KEY,
              arn: `arn:aws:sts::${AWS_ACCOUNT}:assumed-role/PvcPrunerReader/backstage@example.com`,
            },
            {
              ...UNMAPPED_KEY,
              arn: `arn:aws:iam::${AWS_ACCOUNT}:user/stranger`,
            },
          ],
          mapUsers: [
            {
              userarn: AWS_USER_ARN,
              username: 'backstage',
              groups: ['pvc-pruners'],
            },
          ],
          mapRoles: [
            {
              rolearn: `arn:aws:iam::${AWS_ACCOUNT}:role/PvcPrunerReader`,
              username: 'reader:{{AccountID}}:{{SessionName}}',
              groups: ['readers'],
            },
          ],
        },
        bindings: [
          groupBinding('pvc-pruners', ['get', 'list', 'delete']),
          groupBinding('readers', ['list']),
        ],
      },
    });
  });
  afterAll(() => h.close());

  const lastRequest = () => h.sim.requests().at(-1);
  const strategy = new AwsIamStrategy({
    config: new ConfigReader({ aws: { mainAccount: AWS_USER_KEY } }),
  });
  const strategyToken = async (name: string) => {
    const credential = await strategy.getCredential({
      name,
      url: 'https://eks.example.com',
      authMetadata: {},
    });
    if (credential.type !== 'bearer token') throw new Error(credential.type);
    return credential.token;
  };

  it("accepts the token Backstage's AwsIamStrategy makes, mapping the IAM user as mapUsers says", async () => {
    const token = await strategyToken(AWS_CLUSTER);
    expect(token).toMatch(/^k8s-aws-v1\.[A-Za-z0-9_-]+$/);
    const res = await h.http('GET', PVCS, { token });
    expect(res.status).toBe(200);
    expect(lastRequest()?.user).toBe('backstage');
  });

  it('kubectl sends the token from a kubeconfig', async () => {
    const kubeconfig = h.writeFile(
      'aws.kubeconfig',
      h.sim.kubeconfigFor(await strategyToken(AWS_CLUSTER)),
    );
    const get = await h.kubectl(['get', 'pvc'], { kubeconfig });
    expect(get.code).toBe(0);
    expect(get.stderr).toContain('No resources found in default namespace.');
  });

  it('maps session credentials of an assumed role as mapRoles says, with templates', async () => {
    const token = await presignToken({ credentials: SESSION_KEY });
    const res = await h.http('DELETE', `${PVCS}/anything`, { token });
    expect(res.status).toBe(403);
    expect(res.json().message).toContain(
      `User "reader:${AWS_ACCOUNT}:backstage-example.com" cannot delete resource "persistentvolumeclaims"`,
    );
    expect((await h.http('GET', PVCS, { token })).status).toBe(200);
  });

  it('accepts a token signed 14 minutes ago although X-Amz-Expires is 0 (STS gives 15 minutes)', async () => {
    const token = await presignToken({ signingDate: minutesAgo(14) });
    expect((await h.http('GET', PVCS, { token })).status).toBe(200);
  });

  it('accepts STS hosts of other regions and the global one', async () => {
    for (const token of [
      await presignToken({ region: 'eu-west-1' }),
      await presignToken({ region: 'us-east-1', host: 'sts.amazonaws.com' }),
    ]) {
      expect((await h.http('GET', PVCS, { token })).status).toBe(200);
    }
  });

  it('a key added later (new session credentials) is accepted from then on', async () => {
    const later = {
      accessKeyId: 'ASIALATEREXAMPLE0001',
      secretAccessKey: 'later/secret/EXAMPLEKEY',
      sessionToken: 'later-session-token',
    };
    const token = await presignToken({ credentials: later });
    expect((await h.http('GET', PVCS, { token })).status).toBe(401);
    h.sim.addAwsIdentity({
      ...later,
      arn: `arn:aws:sts::${AWS_ACCOUNT}:assumed-role/PvcPrunerReader/job-42`,
    });
    expect((await h.http('GET', PVCS, { token })).status).toBe(200);
    expect(lastRequest()?.user).toBe(`reader:${AWS_ACCOUNT}:job-42`);
  });

  it('a shorter tokenLifetimeSeconds expires tokens mid-test; the strategy signs a fresh one each time', async () => {
    const short = await startHarness({
      https: false,
      auth: {
        aws: {
          clusterId: AWS_CLUSTER,
          identities: [{ ...AWS_USER_KEY, arn: AWS_USER_ARN }],
          mapUsers: [{ userarn: AWS_USER_ARN, username: 'backstage' }],
          tokenLifetimeSeconds: 2,
        },
      },
    });
    try {
      const old = await strategyToken(AWS_CLUSTER);
      const get = (token: string) =>
        short.http('GET', '/api/v1/namespaces', { token });
      expect((await get(old)).status).toBe(403);
      await sleep(3100);
      expect(await refusalReason(short, old)).toMatch(
        /expired \(2 second expiration\)/,
      );
      expect((await get(await strategyToken(AWS_CLUSTER))).status).toBe(403);
      expect(short.sim.requests().at(-1)?.user).toBe('backstage');
    } finally {
      await short.close();
    }
  });

  describe('rejects with 401', () => {
    const cases: Array<[string, () => Promise<string>, RegExp]> = [
      [
        'a token the real AwsIamStrategy made for another cluster',
        () => strategyToken('billing-eks'),
        /SignatureDoesNotMatch/,
      ],
      [
        'an expired token (signed 16 minutes ago)',
        () => presignToken({ signingDate: minutesAgo(16) }),
        /X-Amz-Date parameter is expired \(15 minute expiration\)/,
      ],
      [
        'a token that does not sign x-k8s-aws-id',
        () => presignToken({ clusterId: null }),
        /did not sign the x-k8s-aws-id header/,
      ],
      [
        'a token with a tampered X-Amz-Date (to extend its life)',
        async () =>
          editToken(
            await presignToken({ signingDate: minutesAgo(10) }),
            url => {
              const date = url.searchParams.get('X-Amz-Date')!;
              const second = Number(date.at(-2));
              url.searchParams.set(
                'X-Amz-Date',
                `${date.slice(0, -2)}${(second + 1) % 10}Z`,
              );
            },
          ),
        /SignatureDoesNotMatch/,
      ],
      [
        'a token with a tampered signature',
        async () =>
          editToken(await presignToken(), url => {
            const sig = url.searchParams.get('X-Amz-Signature')!;
            url.searchParams.set(
              'X-Amz-Signature',
              `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`,
            );
          }),
        /SignatureDoesNotMatch/,
      ],
      [
        'a token signed with the wrong secret key',
        () =>
          presignToken({
            credentials: { ...AWS_USER_KEY, secretAccessKey: 'not-the-secret' },
          }),
        /SignatureDoesNotMatch/,
      ],
      [
        'a token of an access key STS does not know',
        () =>
          presignToken({
            credentials: { accessKeyId: 'AKIANOBODY', secretAccessKey: 'x' },
          }),
        /InvalidClientTokenId/,
      ],
      [
        'session credentials without their session token',
        () =>
          presignToken({
            credentials: {
              accessKeyId: SESSION_KEY.accessKeyId,
              secretAccessKey: SESSION_KEY.secretAccessKey,
            },
          }),
        /security token is invalid/,
      ],
      [
        'an identity aws-auth does not map',
        () => presignToken({ credentials: UNMAPPED_KEY }),
        /ARN is not mapped/,
      ],
      [
        'a URL on a host that is not STS',
        () => presignToken({ host: 'sts.evil.example' }),
        /unexpected hostname/,
      ],
      [
        'an X-Amz-Expires beyond 15 minutes',
        () => presignToken({ expiresIn: 3600 }),
        /invalid X-Amz-Expires/,
      ],
      [
        'another action than GetCallerIdentity',
        async () =>
          editToken(await presignToken(), url =>
            url.searchParams.set('Action', 'AssumeRole'),
          ),
        /unexpected action/,
      ],
      [
        'a query parameter outside the allowed list',
        async () =>
          editToken(await presignToken(), url =>
            url.searchParams.set('RoleArn', 'arn:aws:iam::1:role/x'),
          ),
        /non-whitelisted query parameter/,
      ],
    ];
    it.each(cases)('%s', async (_name, make, reason) => {
      const logged = await refusalReason(h, await make());
      expect(logged).toMatch(reason);
      expect(logged).not.toContain('X-Amz-Signature');
    });
  });
});
