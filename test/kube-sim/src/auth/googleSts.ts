import { IssuedAccessTokens } from './issuedTokens';
import {
  IdentityEndpoint,
  oauthError,
  IdentityRequest,
} from './identityEndpoint';
import { OidcIssuer } from './oidc';
import type { GoogleFederationOptions } from './types';

const PREFIX = '/google/sts';
const TOKEN_PATH = `${PREFIX}/v1/token`;
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const SUBJECT_TOKEN_TYPES = [
  'urn:ietf:params:oauth:token-type:jwt',
  'urn:ietf:params:oauth:token-type:id_token',
];

/** `//iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P/providers/X` → `iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/P`. */
function poolOf(audience: string) {
  const m = audience.match(
    /^\/\/(iam\.googleapis\.com\/projects\/[^/]+\/locations\/[^/]+\/workloadIdentityPools\/[^/]+)\/providers\/[^/]+$/,
  );
  if (!m)
    throw new Error(
      `google.audience must be //iam.googleapis.com/projects/<n>/locations/global/workloadIdentityPools/<pool>/providers/<provider>, got ${audience}`,
    );
  return m[1];
}

/**
 * Google's Security Token Service for Workload Identity Federation, as google-auth-library's
 * `external_account` credentials call it at their `token_url`: the subject token (an OIDC ID
 * token of the trusted issuer) is exchanged for an access token of the federated principal
 * `principal://<pool>/subject/<sub>` (groups: `principalSet://<pool>/group/<g>`), as GKE sees it.
 */
export class GoogleStsEndpoint implements IdentityEndpoint {
  readonly prefix = PREFIX;
  readonly tokens = new IssuedAccessTokens('ya29.sim-');
  private readonly pool: string;
  private readonly subjectIssuer: OidcIssuer;

  constructor(
    private readonly options: GoogleFederationOptions,
    private readonly origin: () => string,
  ) {
    this.pool = poolOf(options.audience);
    this.subjectIssuer = new OidcIssuer({
      ...options.subjectIssuer,
      usernamePrefix: '-',
      groupsPrefix: '',
    });
  }

  get tokenUrl() {
    return `${this.origin()}${TOKEN_PATH}`;
  }

  /** A credential JSON for `kubernetes.googleServiceAccountCredentials`, reading its subject token from a file. */
  externalAccount(subjectTokenFile: string) {
    return {
      type: 'external_account' as const,
      audience: this.options.audience,
      subject_token_type: SUBJECT_TOKEN_TYPES[0],
      token_url: this.tokenUrl,
      credential_source: { file: subjectTokenFile },
    };
  }

  async handle(req: IdentityRequest) {
    if (req.method !== 'POST' || req.path !== TOKEN_PATH) return undefined;
    const form = req.form;
    if (form.get('grant_type') !== TOKEN_EXCHANGE)
      return oauthError(400, 'unsupported_grant_type', 'token exchange only');
    if (form.get('audience') !== this.options.audience)
      return oauthError(
        400,
        'invalid_target',
        'The target service indicated by the "audience" parameters is invalid.',
      );
    if (!SUBJECT_TOKEN_TYPES.includes(form.get('subject_token_type') ?? ''))
      return oauthError(
        400,
        'invalid_request',
        'unsupported subject_token_type',
      );
    const requested = form.get('requested_token_type');
    if (requested && requested !== ACCESS_TOKEN_TYPE)
      return oauthError(
        400,
        'invalid_request',
        'unsupported requested_token_type',
      );
    let subject;
    try {
      subject = await this.subjectIssuer.authenticate(
        form.get('subject_token') ?? '',
      );
    } catch (e) {
      return oauthError(
        400,
        'invalid_grant',
        `The subject token is invalid: ${(e as Error).message}`,
      );
    }
    const lifetime = this.options.tokenLifetimeSeconds ?? 3600;
    return {
      status: 200,
      body: {
        access_token: this.tokens.issue(
          {
            name: `principal://${this.pool}/subject/${subject.info.name}`,
            groups: subject.info.groups.map(
              g => `principalSet://${this.pool}/group/${g}`,
            ),
            method: 'google',
          },
          lifetime,
        ),
        issued_token_type: ACCESS_TOKEN_TYPE,
        token_type: 'Bearer',
        expires_in: lifetime,
      },
    };
  }
}
