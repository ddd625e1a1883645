import type { KeyObject } from 'node:crypto';
import {
  createLocalJWKSet,
  decodeJwt,
  errors as joseErrors,
  jwtVerify,
  JWTPayload,
} from 'jose';
import type { TokenAuthenticator } from './authenticator';
import type { RequestUser } from './rbac';
import type { OidcIssuerOptions } from './types';

/** The asymmetric algorithms kube-apiserver's JWT authenticator accepts. */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
];

type KeyInput = KeyObject | ReturnType<typeof createLocalJWKSet>;

function keyInputs(keys: OidcIssuerOptions['keys']): KeyInput[] {
  return Array.isArray(keys) ? keys : [createLocalJWKSet(keys)];
}

function claimStrings(value: unknown, claim: string): string[] {
  if (value === undefined) return [];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every(v => typeof v === 'string'))
    return value;
  throw new Error(`oidc: claim ${claim} is not a string or array of strings`);
}

/** One issuer's JWT authenticator, as kube-apiserver's `--oidc-*` flags configure it. */
export class OidcIssuer {
  private readonly keys: KeyInput[];

  constructor(
    private readonly options: OidcIssuerOptions,
    /** The time tokens are judged at (expiry, not-before). */
    private readonly now: () => Date = () => new Date(),
  ) {
    this.keys = keyInputs(options.keys);
  }

  get issuer() {
    return this.options.issuer;
  }

  async authenticate(token: string): Promise<RequestUser> {
    const payload = await this.verify(token);
    const o = this.options;
    const usernameClaim = o.usernameClaim ?? 'sub';
    const rawName = payload[usernameClaim];
    if (typeof rawName !== 'string' || rawName === '')
      throw new Error(`oidc: claim ${usernameClaim} is missing`);
    if (usernameClaim === 'email' && payload.email_verified === false)
      throw new Error('oidc: email not verified');
    for (const [claim, value] of Object.entries(o.requiredClaims ?? {})) {
      if (payload[claim] !== value)
        throw new Error(`oidc: required claim ${claim} does not match`);
    }
    let prefix = o.usernamePrefix;
    if (prefix === undefined)
      prefix = usernameClaim === 'email' ? '' : `${o.issuer}#`;
    if (prefix === '-') prefix = '';
    const groups = o.groupsClaim
      ? claimStrings(payload[o.groupsClaim], o.groupsClaim).map(
          g => `${o.groupsPrefix ?? ''}${g}`,
        )
      : [];
    return { info: { name: `${prefix}${rawName}`, groups, method: 'oidc' } };
  }

  private async verify(token: string): Promise<JWTPayload> {
    let lastError: unknown;
    for (const key of this.keys) {
      try {
        const options = {
          issuer: this.options.issuer,
          audience: this.options.audiences,
          algorithms: ALGORITHMS,
          requiredClaims: ['exp'],
          currentDate: this.now(),
        };
        const { payload } =
          typeof key === 'function'
            ? await jwtVerify(token, key, options)
            : await jwtVerify(token, key, options);
        return payload;
      } catch (e) {
        lastError = e;
        if (!(e instanceof joseErrors.JWSSignatureVerificationFailed)) break;
      }
    }
    const code = (lastError as { code?: string })?.code ?? 'ERR_JWT_INVALID';
    throw new Error(`oidc: ${code}: ${(lastError as Error)?.message}`);
  }
}

/** OIDC ID tokens: each token goes to the issuer its (unverified) `iss` names, which then verifies it. */
export class OidcAuthenticator implements TokenAuthenticator {
  private readonly issuers: OidcIssuer[] = [];
  /** Added to the real time when tokens are judged: a test's way to make tokens expire at a chosen moment. */
  clockOffsetMs = 0;

  constructor(issuers: OidcIssuerOptions[] = []) {
    for (const issuer of issuers) this.addIssuer(issuer);
  }

  addIssuer(options: OidcIssuerOptions) {
    if (!options.audiences.length)
      throw new Error(`oidc issuer ${options.issuer} needs an audience`);
    this.issuers.push(
      new OidcIssuer(options, () => new Date(Date.now() + this.clockOffsetMs)),
    );
  }

  async authenticateToken(token: string): Promise<RequestUser | undefined> {
    if (token.split('.').length !== 3) return undefined;
    let iss: unknown;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      return undefined;
    }
    const issuer = this.issuers.find(i => i.issuer === iss);
    return issuer ? issuer.authenticate(token) : undefined;
  }
}
