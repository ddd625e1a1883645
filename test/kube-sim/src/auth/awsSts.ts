import { randomBytes, randomUUID } from 'node:crypto';
import { AwsIamAuthenticator, AwsTokenError, parseArn } from './awsIam';
import type { IdentityEndpoint, IdentityRequest } from './identityEndpoint';
import {
  parseAuthorizationHeader,
  sha256Hex,
  signatureOf,
  signaturesEqual,
} from './sigv4';
import type { AwsIdentity, AwsIamAuthOptions, AwsRole } from './types';

const PREFIX = '/aws/sts';
/** STS refuses header-signed requests whose X-Amz-Date is further than this from now. */
const MAX_SKEW_MS = 15 * 60 * 1000;
const XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';

const xmlEscape = (value: string) =>
  value.replace(
    /[<>&'"]/g,
    c =>
      ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' }[
        c
      ]!),
  );

/** An STS error, as the AWS query protocol answers it. */
class StsError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

const header = (req: IdentityRequest, name: string) => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};

function amzDateMs(value: string | undefined) {
  const m = value?.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  if (!m)
    throw new StsError(
      400,
      'IncompleteSignature',
      'X-Amz-Date is missing or malformed',
    );
  const [, y, mo, d, h, mi, s] = m.map(Number);
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

const randomKeyId = () =>
  `ASIA${randomBytes(12).toString('hex').toUpperCase().slice(0, 16)}`;

/**
 * The Security Token Service's query API (`GetCallerIdentity`, `AssumeRole`) for SDK clients pointed at
 * it with AWS_ENDPOINT_URL_STS, as Backstage's AWS credentials manager and `fromTemporaryCredentials`
 * call it. Requests must carry a valid header SigV4 signature of a known access key; assumed-role
 * sessions become identities whose tokens the IAM authenticator accepts until they expire.
 */
export class AwsStsEndpoint implements IdentityEndpoint {
  readonly prefix = PREFIX;

  constructor(
    private readonly options: AwsIamAuthOptions,
    private readonly iam: AwsIamAuthenticator,
    private readonly now: () => number = Date.now,
  ) {
    for (const role of options.roles ?? []) parseArn(role.arn);
  }

  handle(req: IdentityRequest) {
    if (req.method !== 'POST' || req.path !== PREFIX) return undefined;
    try {
      const caller = this.verify(req);
      const action = req.form.get('Action');
      if (action === 'GetCallerIdentity') return this.callerIdentity(caller);
      if (action === 'AssumeRole') return this.assumeRole(caller, req.form);
      throw new StsError(
        400,
        'InvalidAction',
        `Could not find operation ${action}`,
      );
    } catch (e) {
      const error =
        e instanceof StsError
          ? e
          : new StsError(
              403,
              (e as Error).message.split(':')[0],
              (e as Error).message,
            );
      return {
        status: error.status,
        contentType: 'text/xml',
        body: `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${xmlEscape(
          error.code,
        )}</Code><Message>${xmlEscape(
          error.message,
        )}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
      };
    }
  }

  /** The caller of a header-signed request, or a refusal as STS words it. */
  private verify(req: IdentityRequest): AwsIdentity {
    const auth = parseAuthorizationHeader(header(req, 'authorization'));
    if (!auth)
      throw new StsError(
        403,
        'MissingAuthenticationToken',
        'Request is missing Authentication Token',
      );
    const amzDate = header(req, 'x-amz-date') ?? '';
    if (Math.abs(this.now() - amzDateMs(amzDate)) > MAX_SKEW_MS)
      throw new StsError(403, 'SignatureDoesNotMatch', 'Signature expired');
    const [day, , service, terminator] = auth.scope.split('/');
    if (
      day !== amzDate.slice(0, 8) ||
      service !== 'sts' ||
      terminator !== 'aws4_request'
    )
      throw new StsError(
        403,
        'SignatureDoesNotMatch',
        'Credential should be scoped to a valid region, the sts service and aws4_request',
      );
    let identity: AwsIdentity;
    try {
      identity = this.iam.identityOf(
        auth.accessKeyId,
        header(req, 'x-amz-security-token'),
      );
    } catch (e) {
      if (!(e instanceof AwsTokenError)) throw e;
      const [code, message] = e.message.split(': ');
      throw new StsError(code === 'ExpiredToken' ? 400 : 403, code, message);
    }
    const headers = new Map(
      auth.signedHeaders.map(name => [name, header(req, name) ?? ''] as const),
    );
    const expected = signatureOf(
      {
        method: req.method,
        path: req.rawPath,
        query: new Map(),
        headers,
        signedHeaders: auth.signedHeaders,
        amzDate,
        scope: auth.scope,
        payloadHash: header(req, 'x-amz-content-sha256') ?? sha256Hex(req.body),
      },
      identity.secretAccessKey,
    );
    if (!signaturesEqual(expected, auth.signature))
      throw new StsError(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided.',
      );
    return identity;
  }

  private callerIdentity(caller: AwsIdentity) {
    const arn = parseArn(caller.arn);
    const userId = arn.sessionName
      ? `AROA${caller.accessKeyId.slice(4, 20)}:${arn.sessionName}`
      : `AIDA${caller.accessKeyId.slice(4, 20)}`;
    return this.xml(
      'GetCallerIdentity',
      `<Arn>${xmlEscape(caller.arn)}</Arn><UserId>${xmlEscape(
        userId,
      )}</UserId><Account>${arn.accountId}</Account>`,
    );
  }

  private assumeRole(caller: AwsIdentity, form: URLSearchParams) {
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? '';
    if (!/^[\w+=,.@-]{2,64}$/.test(sessionName))
      throw new StsError(
        400,
        'ValidationError',
        'RoleSessionName must be 2-64 characters of [\\w+=,.@-]',
      );
    const role = this.options.roles?.find(r => r.arn === roleArn);
    const callerArn = parseArn(caller.arn).canonical;
    if (!role || !this.trusts(role, callerArn, form.get('ExternalId')))
      throw new StsError(
        403,
        'AccessDenied',
        `User: ${caller.arn} is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
      );
    const requested = Number(form.get('DurationSeconds') ?? NaN);
    const duration = Math.min(
      Number.isFinite(requested) ? requested : Infinity,
      role.sessionDurationSeconds ?? 3600,
    );
    const { accountId } = parseArn(role.arn);
    const roleName = role.arn.split('/').pop()!;
    const session: AwsIdentity = {
      accessKeyId: randomKeyId(),
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: randomBytes(48).toString('base64'),
      arn: `arn:aws:sts::${accountId}:assumed-role/${roleName}/${sessionName}`,
      expiration: new Date(this.now() + duration * 1000),
    };
    this.iam.addIdentity(session);
    return this.xml(
      'AssumeRole',
      `<Credentials><AccessKeyId>${
        session.accessKeyId
      }</AccessKeyId><SecretAccessKey>${xmlEscape(
        session.secretAccessKey,
      )}</SecretAccessKey><SessionToken>${xmlEscape(
        session.sessionToken!,
      )}</SessionToken><Expiration>${session.expiration!.toISOString()}</Expiration></Credentials><AssumedRoleUser><AssumedRoleId>AROA${session.accessKeyId.slice(
        4,
      )}:${xmlEscape(sessionName)}</AssumedRoleId><Arn>${xmlEscape(
        session.arn,
      )}</Arn></AssumedRoleUser>`,
    );
  }

  private trusts(role: AwsRole, callerArn: string, externalId: string | null) {
    if (role.externalId !== undefined && role.externalId !== externalId)
      return false;
    return (
      !role.trustedPrincipals ||
      role.trustedPrincipals.some(
        p => p.toLowerCase() === callerArn.toLowerCase(),
      )
    );
  }

  private xml(action: string, result: string) {
    return {
      status: 200,
      contentType: 'text/xml',
      body: `<${action}Response xmlns="${XMLNS}"><${action}Result>${result}</${action}Result><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>`,
    };
  }
}
