/** A request to one of the simulator's identity-provider endpoints (served without Kubernetes authentication). */
export interface IdentityRequest {
  method: string;
  /** The path without trailing slashes. */
  path: string;
  /** The path as the client sent it (SigV4 signs it). */
  rawPath: string;
  /** The raw body (SigV4 signs its hash). */
  body: Buffer;
  /** The body of a form POST, parsed. */
  form: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
}

export interface IdentityResponse {
  status: number;
  /** JSON, or text when a string. */
  body: unknown;
  /** Default application/json. */
  contentType?: string;
}

/** An identity provider's endpoint the simulator serves beside the Kubernetes API (Entra/ADFS, Google STS, AWS STS). */
export interface IdentityEndpoint {
  /** Path prefix the endpoint owns. */
  readonly prefix: string;
  /** The answer; undefined for a path under the prefix it does not serve (404). */
  handle(
    req: IdentityRequest,
  ): IdentityResponse | undefined | Promise<IdentityResponse | undefined>;
}

/** An OAuth 2.0 error response (RFC 6749 §5.2). */
export const oauthError = (
  status: number,
  error: string,
  description: string,
): IdentityResponse => ({
  status,
  body: { error, error_description: description },
});
