import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** RFC 3986 encoding as SigV4 canonicalises it: only A-Z a-z 0-9 - _ . ~ stay as they are. */
export function awsUriEncode(value: string) {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export const sha256Hex = (data: string | Buffer) =>
  createHash('sha256').update(data).digest('hex');

const hmac = (key: Buffer | string, data: string) =>
  createHmac('sha256', key).update(data, 'utf8').digest();

const cmp = (a: string, b: string) => {
  if (a < b) return -1;
  return a > b ? 1 : 0;
};

/** What a SigV4 signature covers. */
export interface SignedRequest {
  method: string;
  path: string;
  /** Query parameters; X-Amz-Signature (of a presigned URL) is left out of the canonical query. */
  query: Map<string, string>;
  /** Lower-case names of the signed headers and their values. */
  headers: Map<string, string>;
  signedHeaders: string[];
  /** `yyyymmddThhmmssZ`. */
  amzDate: string;
  /** `<yyyymmdd>/<region>/<service>/aws4_request`. */
  scope: string;
  /** Hex SHA-256 of the body. */
  payloadHash: string;
}

/** The AWS Signature Version 4: canonical request, string to sign and the HMAC chain from the secret key, as the AWS docs define them. */
export function signatureOf(request: SignedRequest, secretAccessKey: string) {
  const canonicalQuery = [...request.query]
    .filter(([key]) => key !== 'X-Amz-Signature')
    .map(([key, value]) => [awsUriEncode(key), awsUriEncode(value)])
    .sort(([a, av], [b, bv]) => (a === b ? cmp(av, bv) : cmp(a, b)))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const canonicalHeaders = request.signedHeaders
    .map(
      name =>
        `${name}:${(request.headers.get(name) ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalRequest = [
    request.method,
    request.path,
    canonicalQuery,
    canonicalHeaders,
    request.signedHeaders.join(';'),
    request.payloadHash,
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    request.amzDate,
    request.scope,
    sha256Hex(canonicalRequest),
  ].join('\n');
  const [day, region, service, terminator] = request.scope.split('/');
  const signingKey = [region, service, terminator].reduce(
    (key, part) => hmac(key, part),
    hmac(`AWS4${secretAccessKey}`, day),
  );
  return createHmac('sha256', signingKey)
    .update(stringToSign, 'utf8')
    .digest('hex');
}

/** The signature of a presigned GET (empty body), as STS checks a presigned GetCallerIdentity URL. */
export function presignedSignature(
  request: Omit<SignedRequest, 'method' | 'payloadHash'>,
  secretAccessKey: string,
) {
  return signatureOf(
    { ...request, method: 'GET', payloadHash: sha256Hex('') },
    secretAccessKey,
  );
}

/** `AWS4-HMAC-SHA256 Credential=AKID/scope, SignedHeaders=a;b, Signature=hex` → its parts. */
export function parseAuthorizationHeader(header: string | undefined) {
  const m = header?.match(
    /^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)\/([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/,
  );
  if (!m) return undefined;
  return {
    accessKeyId: m[1],
    scope: m[2],
    signedHeaders: m[3].split(';'),
    signature: m[4],
  };
}

/** Compares two hex signatures in constant time. */
export function signaturesEqual(a: string, b: string) {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
