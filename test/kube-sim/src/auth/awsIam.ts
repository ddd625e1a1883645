import type { TokenAuthenticator } from './authenticator';
import type { RequestUser } from './rbac';
import { presignedSignature, signaturesEqual } from './sigv4';
import type { AwsIamAuthOptions, AwsIdentity } from './types';

const TOKEN_PREFIX = 'k8s-aws-v1.';
const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** Presigned STS URLs, and so tokens, expire 15 minutes after X-Amz-Date, whatever X-Amz-Expires says. */
const PRESIGNED_URL_EXPIRATION_MS = 15 * 60 * 1000;
const MAX_TOKEN_LENGTH = 1024 * 4;
const ALLOWED_PARAMETERS = new Set([
  'action',
  'version',
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-security-token',
  'x-amz-signature',
  'x-amz-signedheaders',
]);

/** Why STS or the authenticator refused; its message never quotes the token. */
export class AwsTokenError extends Error {}

function parseAmzDate(value: string) {
  const m = value.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  if (!m) throw new AwsTokenError(`malformed X-Amz-Date parameter ${value}`);
  const [, y, mo, d, h, mi, s] = m.map(Number);
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

/** The region an STS hostname serves: `sts.amazonaws.com` is us-east-1. */
function stsRegion(host: string) {
  if (host === 'sts.amazonaws.com') return 'us-east-1';
  return host.match(/^sts\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/)?.[1];
}

/** arn:aws:sts::<acct>:assumed-role/<role>/<session> → arn:aws:iam::<acct>:role/<role>, as aws-iam-authenticator canonicalises. */
export function parseArn(arn: string) {
  const m = arn.match(/^arn:([^:]+):(iam|sts)::(\d{12}):(.+)$/);
  if (!m) throw new AwsTokenError(`malformed caller ARN ${arn}`);
  const [, partition, service, accountId, resource] = m;
  const parts = resource.split('/');
  if (service === 'sts' && parts[0] === 'assumed-role' && parts.length === 3) {
    return {
      accountId,
      sessionName: parts[2],
      canonical: `arn:${partition}:iam::${accountId}:role/${parts[1]}`,
    };
  }
  if (service === 'iam' && (parts[0] === 'user' || parts[0] === 'role')) {
    return { accountId, sessionName: '', canonical: arn };
  }
  throw new AwsTokenError(`unsupported caller ARN ${arn}`);
}

function renderTemplate(
  template: string,
  vars: { AccountID: string; SessionName: string; AccessKeyID: string },
) {
  return template
    .replace(/\{\{AccountID\}\}/g, vars.AccountID)
    .replace(/\{\{SessionNameRaw\}\}/g, vars.SessionName)
    .replace(/\{\{SessionName\}\}/g, vars.SessionName.replace(/@/g, '-'))
    .replace(/\{\{AccessKeyID\}\}/g, vars.AccessKeyID);
}

/**
 * aws-iam-authenticator's server side, with the STS call done here: the token's presigned
 * `GetCallerIdentity` URL must be well-formed, sign `x-k8s-aws-id` (with this cluster's id, or the
 * signature fails as STS would fail it) and be younger than 15 minutes; the signature is checked
 * with the access key's configured secret, and the caller ARN mapped as aws-auth maps it.
 */
export class AwsIamAuthenticator implements TokenAuthenticator {
  private readonly identities = new Map<string, AwsIdentity>();

  constructor(
    private readonly options: AwsIamAuthOptions,
    private readonly now: () => number = Date.now,
  ) {
    for (const identity of options.identities) this.addIdentity(identity);
  }

  addIdentity(identity: AwsIdentity) {
    parseArn(identity.arn);
    this.identities.set(identity.accessKeyId, identity);
  }

  /** The identity of an access key, checked as STS checks the credentials of a request. */
  identityOf(accessKeyId: string, sessionToken: string | undefined) {
    const identity = this.identities.get(accessKeyId);
    if (!identity)
      throw new AwsTokenError(
        'InvalidClientTokenId: the access key is not known to STS',
      );
    if ((identity.sessionToken ?? undefined) !== sessionToken)
      throw new AwsTokenError(
        'InvalidClientTokenId: the security token is invalid',
      );
    if (identity.expiration && this.now() >= identity.expiration.getTime())
      throw new AwsTokenError(
        'ExpiredToken: the security token included in the request is expired',
      );
    return identity;
  }

  async authenticateToken(token: string): Promise<RequestUser | undefined> {
    if (!token.startsWith(TOKEN_PREFIX)) return undefined;
    if (token.length > MAX_TOKEN_LENGTH)
      throw new AwsTokenError('aws: token is too large');
    try {
      return this.verify(token.slice(TOKEN_PREFIX.length));
    } catch (e) {
      if (e instanceof AwsTokenError) throw new Error(`aws: ${e.message}`);
      throw new Error('aws: malformed token');
    }
  }

  private verify(encoded: string): RequestUser {
    if (!/^[A-Za-z0-9_-]*$/.test(encoded))
      throw new AwsTokenError('token is not base64url without padding');
    const url = new URL(Buffer.from(encoded, 'base64url').toString('utf8'));
    if (url.protocol !== 'https:')
      throw new AwsTokenError(`unexpected scheme in pre-signed URL`);
    const region = stsRegion(url.host);
    if (!region)
      throw new AwsTokenError(
        `unexpected hostname ${url.host} in pre-signed URL`,
      );
    if (url.pathname !== '/')
      throw new AwsTokenError('unexpected path in pre-signed URL');

    const query = new Map<string, string>();
    const lower = new Map<string, string>();
    for (const [key, value] of url.searchParams) {
      if (!ALLOWED_PARAMETERS.has(key.toLowerCase()))
        throw new AwsTokenError(`non-whitelisted query parameter ${key}`);
      if (query.has(key))
        throw new AwsTokenError('query parameter with multiple values');
      query.set(key, value);
      lower.set(key.toLowerCase(), value);
    }
    if (lower.get('action') !== 'GetCallerIdentity')
      throw new AwsTokenError('unexpected action parameter in pre-signed URL');
    if (lower.get('x-amz-algorithm') !== 'AWS4-HMAC-SHA256')
      throw new AwsTokenError('unexpected X-Amz-Algorithm');
    const signedHeaders = (lower.get('x-amz-signedheaders') ?? '')
      .split(';')
      .map(h => h.toLowerCase());
    if (!signedHeaders.includes(CLUSTER_ID_HEADER))
      throw new AwsTokenError(
        `client did not sign the ${CLUSTER_ID_HEADER} header in the pre-signed URL`,
      );
    const expires = Number(lower.get('x-amz-expires'));
    if (!Number.isInteger(expires) || expires < 0 || expires > 900)
      throw new AwsTokenError(
        'invalid X-Amz-Expires parameter in pre-signed URL',
      );
    const amzDate = lower.get('x-amz-date') ?? '';
    const signedAt = parseAmzDate(amzDate);
    const now = this.now();
    const lifetime =
      this.options.tokenLifetimeSeconds ?? PRESIGNED_URL_EXPIRATION_MS / 1000;
    if (now > signedAt + lifetime * 1000)
      throw new AwsTokenError(
        `X-Amz-Date parameter is expired (${
          lifetime % 60 ? `${lifetime} second` : `${lifetime / 60} minute`
        } expiration) ${new Date(signedAt).toISOString()}`,
      );
    if (signedAt > now + PRESIGNED_URL_EXPIRATION_MS)
      throw new AwsTokenError('X-Amz-Date is too far in the future');

    const [accessKeyId, ...scopeParts] = (
      lower.get('x-amz-credential') ?? ''
    ).split('/');
    const scope = scopeParts.join('/');
    if (scope !== `${amzDate.slice(0, 8)}/${region}/sts/aws4_request`)
      throw new AwsTokenError('credential scope does not match the request');
    const identity = this.identityOf(
      accessKeyId,
      lower.get('x-amz-security-token'),
    );

    const expected = presignedSignature(
      {
        path: url.pathname,
        query,
        // The verifier sends its own cluster id, so a token for another cluster fails here.
        headers: new Map([
          ['host', url.host],
          [CLUSTER_ID_HEADER, this.options.clusterId],
        ]),
        signedHeaders,
        amzDate,
        scope,
      },
      identity.secretAccessKey,
    );
    if (!signaturesEqual(expected, lower.get('x-amz-signature') ?? ''))
      throw new AwsTokenError(
        'SignatureDoesNotMatch: the request signature we calculated does not match the signature you provided',
      );
    return this.mapIdentity(identity);
  }

  private mapIdentity(identity: AwsIdentity): RequestUser {
    const arn = parseArn(identity.arn);
    const canonical = arn.canonical.toLowerCase();
    const vars = {
      AccountID: arn.accountId,
      SessionName: arn.sessionName,
      AccessKeyID: identity.accessKeyId,
    };
    const mapping =
      this.options.mapRoles?.find(m => m.rolearn.toLowerCase() === canonical) ??
      this.options.mapUsers?.find(m => m.userarn.toLowerCase() === canonical);
    if (!mapping)
      throw new AwsTokenError(`ARN is not mapped: ${arn.canonical}`);
    return {
      info: {
        name: renderTemplate(mapping.username, vars),
        groups: (mapping.groups ?? []).map(g => renderTemplate(g, vars)),
        method: 'aws',
      },
    };
  }
}
