import { ConfigReader } from '@backstage/config';
import { AwsIamStrategy } from '@backstage/plugin-kubernetes-backend';
import {
  ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE,
  ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID,
} from '@backstage/plugin-kubernetes-common';
import {
  AWS_ACCOUNT,
  AWS_CLUSTER,
  AWS_USER_ARN,
  AWS_USER_KEY,
  PVCS,
  groupBinding,
} from './authFixtures';
import { SimHarness, sleep, startHarness } from './helpers';

jest.setTimeout(60000);

const PRUNER_ROLE = `arn:aws:iam::${AWS_ACCOUNT}:role/PvcPruner`;
const LOCKED_ROLE = `arn:aws:iam::${AWS_ACCOUNT}:role/OnlyForCi`;

describe("AwsIamStrategy's aws-assume-role through the simulated STS", () => {
  let h: SimHarness;
  const savedEndpoint = process.env.AWS_ENDPOINT_URL_STS;

  beforeAll(async () => {
    // Plain http: the AWS SDK in this process trusts only the public CAs.
    h = await startHarness({
      https: false,
      auth: {
        aws: {
          clusterId: AWS_CLUSTER,
          identities: [{ ...AWS_USER_KEY, arn: AWS_USER_ARN }],
          roles: [
            {
              arn: PRUNER_ROLE,
              trustedPrincipals: [AWS_USER_ARN],
              externalId: 'backstage-ext',
              sessionDurationSeconds: 2,
            },
            {
              arn: LOCKED_ROLE,
              trustedPrincipals: [`arn:aws:iam::${AWS_ACCOUNT}:user/ci`],
            },
          ],
          mapRoles: [
            {
              rolearn: PRUNER_ROLE,
              username: 'pruner:{{SessionName}}',
              groups: ['pruners'],
            },
          ],
        },
        bindings: [groupBinding('pruners', ['list'])],
      },
    });
    process.env.AWS_ENDPOINT_URL_STS = h.sim.awsStsEndpoint;
  });
  afterAll(async () => {
    if (savedEndpoint === undefined) delete process.env.AWS_ENDPOINT_URL_STS;
    else process.env.AWS_ENDPOINT_URL_STS = savedEndpoint;
    await h.close();
  });

  const strategy = new AwsIamStrategy({
    config: new ConfigReader({ aws: { mainAccount: AWS_USER_KEY } }),
  });
  const tokenFor = async (authMetadata: Record<string, string>) => {
    const credential = await strategy.getCredential({
      name: AWS_CLUSTER,
      url: 'https://eks.example.com',
      authMetadata,
    });
    if (credential.type !== 'bearer token') throw new Error(credential.type);
    return credential.token;
  };
  const stsCalls = () =>
    h.sim
      .requests()
      .filter(r => r.path.startsWith('/aws/sts'))
      .map(r => r.status);

  it('assumes the role with the external id; the session signs a token mapRoles maps', async () => {
    const token = await tokenFor({
      [ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE]: PRUNER_ROLE,
      [ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID]: 'backstage-ext',
    });
    const res = await h.http('GET', PVCS, { token });
    expect(res.status).toBe(200);
    expect(h.sim.requests().at(-1)?.user).toMatch(/^pruner:aws-sdk-js-\d+$/);
    // GetCallerIdentity (the credentials manager's account lookup), then AssumeRole.
    expect(stsCalls()).toEqual([200, 200]);
  });

  it('a token of expired session credentials is 401; a fresh credential from the strategy works', async () => {
    const metadata = {
      [ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE]: PRUNER_ROLE,
      [ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID]: 'backstage-ext',
    };
    const old = await tokenFor(metadata);
    expect((await h.http('GET', PVCS, { token: old })).status).toBe(200);
    await sleep(2200);
    expect((await h.http('GET', PVCS, { token: old })).status).toBe(401);
    expect(h.sim.requests().at(-1)?.authError).toContain('ExpiredToken');
    const fresh = await tokenFor(metadata);
    expect((await h.http('GET', PVCS, { token: fresh })).status).toBe(200);
  });

  it('refuses AssumeRole with a wrong external id, or for a role that does not trust the caller', async () => {
    await expect(
      tokenFor({
        [ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE]: PRUNER_ROLE,
        [ANNOTATION_KUBERNETES_AWS_EXTERNAL_ID]: 'guess',
      }),
    ).rejects.toThrow(/not authorized to perform: sts:AssumeRole/);
    await expect(
      tokenFor({ [ANNOTATION_KUBERNETES_AWS_ASSUME_ROLE]: LOCKED_ROLE }),
    ).rejects.toThrow(/not authorized to perform: sts:AssumeRole/);
  });

  it('answers unsigned or badly signed STS calls as STS does', async () => {
    const form = 'Action=GetCallerIdentity&Version=2011-06-15';
    const headers = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const unsigned = await h.http('POST', '/aws/sts/', {
      token: null,
      body: form,
      headers,
    });
    expect(unsigned.status).toBe(403);
    expect(unsigned.text).toContain('<Code>MissingAuthenticationToken</Code>');
    const amzDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
    const forged = await h.http('POST', '/aws/sts/', {
      token: null,
      body: form,
      headers: {
        ...headers,
        'X-Amz-Date': amzDate,
        Authorization: `AWS4-HMAC-SHA256 Credential=${
          AWS_USER_KEY.accessKeyId
        }/${amzDate.slice(
          0,
          8,
        )}/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0'.repeat(
          64,
        )}`,
      },
    });
    expect(forged.status).toBe(403);
    expect(forged.text).toContain('<Code>SignatureDoesNotMatch</Code>');
  });
});
