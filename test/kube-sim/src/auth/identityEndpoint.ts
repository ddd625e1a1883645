/** A request to one of the simulator's OAuth endpoints (served without Kubernetes authentication). */
export interface OAuthRequest {
  method: string;
  path: string;
  /** The form body of a POST. */
  form: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
}

export interface OAuthResponse {
  status: number;
  body: unknown;
}

/** An OAuth endpoint the simulator serves beside the Kubernetes API (Entra/ADFS, Google STS). */
export interface OAuthEndpoint {
  /** Path prefix the endpoint owns. */
  readonly prefix: string;
  /** The answer; undefined for a path under the prefix it does not serve (404). */
  handle(
    req: OAuthRequest,
  ): OAuthResponse | undefined | Promise<OAuthResponse | undefined>;
}

/** An OAuth 2.0 error response (RFC 6749 §5.2). */
export const oauthError = (
  status: number,
  error: string,
  description: string,
): OAuthResponse => ({
  status,
  body: { error, error_description: description },
});
