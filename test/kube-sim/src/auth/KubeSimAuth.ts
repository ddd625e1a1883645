import { RequestAuthenticator, TokenAuthenticator } from './authenticator';
import { AwsIamAuthenticator } from './awsIam';
import { OidcAuthenticator } from './oidc';
import { RbacAuthorizer } from './rbac';
import { StaticTokens } from './tokens';
import type { AwsIdentity, KubeSimAuthOptions } from './types';
import { CertificateAuthority, createCertificateAuthority } from './x509';

/** Every authentication method of one simulator, and its RBAC, built from its options. */
export class KubeSimAuth {
  readonly tokens = new StaticTokens();
  readonly oidc: OidcAuthenticator;
  readonly aws?: AwsIamAuthenticator;
  readonly authorizer = new RbacAuthorizer();
  readonly authenticator: RequestAuthenticator;
  /** The client CA; only with TLS, since only TLS carries client certificates. */
  readonly clientCa?: CertificateAuthority;

  constructor(options: KubeSimAuthOptions, tls: boolean) {
    this.oidc = new OidcAuthenticator(options.oidc);
    if (options.aws) this.aws = new AwsIamAuthenticator(options.aws);
    for (const binding of options.bindings ?? [])
      this.authorizer.addBinding(binding);
    if (tls) this.clientCa = createCertificateAuthority();
    const methods: TokenAuthenticator[] = [this.tokens, this.oidc];
    if (this.aws) methods.push(this.aws);
    this.authenticator = new RequestAuthenticator(methods);
  }

  /** The CA a TLS server asks client certificates to be signed by. */
  get clientCaCert() {
    return this.clientCa?.cert;
  }

  issueClientCertificate: CertificateAuthority['issueClientCertificate'] =
    subject => {
      if (!this.clientCa)
        throw new Error(
          'kube-sim: client certificates need https (startKubeSim({ https: true }))',
        );
      return this.clientCa.issueClientCertificate(subject);
    };

  addAwsIdentity(identity: AwsIdentity) {
    if (!this.aws)
      throw new Error(
        'kube-sim: AWS IAM authentication is off (startKubeSim({ auth: { aws } }))',
      );
    this.aws.addIdentity(identity);
  }
}
