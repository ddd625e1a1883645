import { timingSafeEqual } from 'node:crypto';
import { IssuedAccessTokens } from './issuedTokens';
import {
  IdentityEndpoint,
  oauthError,
  IdentityRequest,
} from './identityEndpoint';
import type { AzureAuthOptions, AzureClient } from './types';

/** The Entra ID application AKS's API server accepts tokens for (what AzureIdentityStrategy asks for). */
export const AKS_SCOPE = '6dae42f8-4368-4678-94ff-3960e28e3630/.default';
const PREFIX = '/adfs';

const secretsEqual = (a: string, b: string) => {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
};

/**
 * An authority @azure/identity's client-secret flow can use: with tenant `adfs`, identity lists the
 * authority as known, so MSAL skips Entra instance discovery (which it would otherwise send to
 * login.microsoftonline.com) and reads `<authority>/.well-known/openid-configuration`, then
 * POSTs the client-credentials grant to its token endpoint. Issued tokens authenticate as the client.
 */
export class AzureAuthority implements IdentityEndpoint {
  readonly prefix = PREFIX;
  readonly tokens = new IssuedAccessTokens('aks-sim.');
  private readonly clients = new Map<string, AzureClient>();

  constructor(
    private readonly options: AzureAuthOptions,
    private readonly origin: () => string,
  ) {
    for (const client of options.clients) this.addClient(client);
  }

  addClient(client: AzureClient) {
    this.clients.set(client.clientId, client);
  }

  handle(req: IdentityRequest) {
    const base = `${this.origin()}${PREFIX}`;
    if (
      req.method === 'GET' &&
      req.path === `${PREFIX}/.well-known/openid-configuration`
    ) {
      return {
        status: 200,
        body: {
          issuer: base,
          authorization_endpoint: `${base}/oauth2/authorize/`,
          token_endpoint: `${base}/oauth2/token/`,
          jwks_uri: `${base}/discovery/keys`,
          response_types_supported: ['code', 'id_token', 'code id_token'],
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_post'],
        },
      };
    }
    if (req.method === 'GET' && req.path === `${PREFIX}/discovery/keys`)
      return { status: 200, body: { keys: [] } };
    if (req.method === 'POST' && req.path === `${PREFIX}/oauth2/token`)
      return this.token(req.form);
    return undefined;
  }

  private token(form: URLSearchParams) {
    if (form.get('grant_type') !== 'client_credentials')
      return oauthError(
        400,
        'unsupported_grant_type',
        'only client_credentials is served',
      );
    const client = this.clients.get(form.get('client_id') ?? '');
    const secret = form.get('client_secret') ?? '';
    if (!client || !secretsEqual(client.clientSecret, secret))
      return oauthError(
        401,
        'invalid_client',
        'AADSTS7000215: Invalid client secret provided.',
      );
    const scopes = (form.get('scope') ?? '').split(' ');
    if (!scopes.includes(AKS_SCOPE))
      return oauthError(
        400,
        'invalid_scope',
        `the simulator issues tokens for ${AKS_SCOPE} only`,
      );
    const lifetime = this.options.tokenLifetimeSeconds ?? 3600;
    return {
      status: 200,
      body: {
        token_type: 'Bearer',
        expires_in: lifetime,
        ext_expires_in: lifetime,
        access_token: this.tokens.issue(
          {
            name: client.username ?? client.clientId,
            groups: client.groups ?? [],
            method: 'azure',
          },
          lifetime,
        ),
      },
    };
  }
}
