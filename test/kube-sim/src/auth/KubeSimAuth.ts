import { RequestAuthenticator, TokenAuthenticator } from './authenticator';
import { AwsIamAuthenticator } from './awsIam';
import { AwsStsEndpoint } from './awsSts';
import { AzureAuthority } from './azure';
import { GoogleStsEndpoint } from './googleSts';
import type { IdentityEndpoint } from './identityEndpoint';
import { OidcAuthenticator } from './oidc';
import { RbacAuthorizer } from './rbac';
import { StaticTokens } from './tokens';
import type { AwsIdentity, AzureClient, KubeSimAuthOptions } from './types';
import { CertificateAuthority, createCertificateAuthority } from './x509';

/** Every authentication method of one simulator, and its RBAC, built from its options. */
export class KubeSimAuth {
  readonly tokens = new StaticTokens();
  readonly oidc: OidcAuthenticator;
  readonly aws?: AwsIamAuthenticator;
  readonly google?: GoogleStsEndpoint;
  readonly azure?: AzureAuthority;
  /** The identity-provider endpoints served beside the API, unauthenticated. */
  readonly endpoints: IdentityEndpoint[] = [];
  readonly authorizer = new RbacAuthorizer();
  readonly authenticator: RequestAuthenticator;
  /** The client CA; only with TLS, since only TLS carries client certificates. */
  readonly clientCa?: CertificateAuthority;

  /** `origin` is the server's URL, known once it listens. */
  constructor(options: KubeSimAuthOptions, tls: boolean, origin: () => string) {
    this.oidc = new OidcAuthenticator(options.oidc);
    if (options.aws) {
      this.aws = new AwsIamAuthenticator(options.aws);
      this.endpoints.push(new AwsStsEndpoint(options.aws, this.aws));
    }
    if (options.google) {
      this.google = new GoogleStsEndpoint(options.google, origin);
      this.endpoints.push(this.google);
    }
    if (options.azure) {
      if (!tls)
        throw new Error(
          'kube-sim: auth.azure needs https, since @azure/identity only talks to https authorities',
        );
      this.azure = new AzureAuthority(options.azure, origin);
      this.endpoints.push(this.azure);
    }
    for (const binding of options.bindings ?? [])
      this.authorizer.addBinding(binding);
    if (tls) this.clientCa = createCertificateAuthority();
    const methods: TokenAuthenticator[] = [this.tokens, this.oidc];
    if (this.aws) methods.push(this.aws);
    if (this.google) methods.push(this.google.tokens);
    if (this.azure) methods.push(this.azure.tokens);
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

  addAzureClient(client: AzureClient) {
    if (!this.azure)
      throw new Error(
        'kube-sim: Azure authentication is off (startKubeSim({ https: true, auth: { azure } }))',
      );
    this.azure.addClient(client);
  }

  googleExternalAccount(subjectTokenFile: string) {
    if (!this.google)
      throw new Error(
        'kube-sim: Google federation is off (startKubeSim({ auth: { google } }))',
      );
    return this.google.externalAccount(subjectTokenFile);
  }

  addAwsIdentity(identity: AwsIdentity) {
    if (!this.aws)
      throw new Error(
        'kube-sim: AWS IAM authentication is off (startKubeSim({ auth: { aws } }))',
      );
    this.aws.addIdentity(identity);
  }
}
