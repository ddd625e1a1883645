import { generateKeyPairSync } from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import type { OidcIssuerOptions } from './types';

/** An OIDC identity provider for tests: its options for `auth.oidc`, and ID tokens it signs. */
export interface TestOidcIssuer {
  /** Pass to `startKubeSim({ auth: { oidc: [issuer.options] } })` or `sim.addOidcIssuer()`. */
  options: OidcIssuerOptions;
  /**
   * An RS256 ID token with `iss` and `aud` (the first audience) set, plus `claims`;
   * `expiresIn` is a jose duration (`'5m'`, default) or an absolute epoch second.
   */
  idToken(
    claims: Record<string, unknown>,
    expiresIn?: string | number,
  ): Promise<string>;
}

/** A new issuer with its own RSA key, published as a one-key JWKS (`kid` set). */
export async function createTestOidcIssuer(
  options: Omit<OidcIssuerOptions, 'keys'>,
): Promise<TestOidcIssuer> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
  });
  const kid = 'kube-sim-test';
  const jwk = {
    ...(await exportJWK(publicKey)),
    kid,
    alg: 'RS256',
    use: 'sig',
  };
  return {
    options: { ...options, keys: { keys: [jwk] } },
    idToken: (claims, expiresIn = '5m') =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid })
        .setIssuer(options.issuer)
        .setAudience(options.audiences[0])
        .setIssuedAt()
        .setExpirationTime(expiresIn)
        .sign(privateKey),
  };
}
