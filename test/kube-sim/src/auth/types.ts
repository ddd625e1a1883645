import type { KeyObject } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';

/** An RBAC PolicyRule, as in a Role or ClusterRole. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** What a bearer token may do: RBAC rules, limited to some namespaces when `namespaces` is set. */
export interface TokenGrant {
  user: string;
  rules: PolicyRule[];
  /** Namespaces the rules apply in (a RoleBinding); unset means cluster-wide (a ClusterRoleBinding). */
  namespaces?: string[];
}

/** A subject of a binding, as in a RoleBinding's `subjects`. Names are compared after any username/groups prefix. */
export interface RbacSubject {
  kind: 'User' | 'Group';
  name: string;
}

/**
 * RBAC rules for users and groups, whichever way they authenticated: a RoleBinding
 * (with `namespaces`) or a ClusterRoleBinding (without) whose role holds `rules`.
 */
export interface RbacBinding {
  subjects: RbacSubject[];
  rules: PolicyRule[];
  /** Namespaces the rules apply in; unset means cluster-wide. */
  namespaces?: string[];
}

/** Who a request authenticated as, as kube-apiserver's user.Info. */
export interface AuthenticatedUser {
  name: string;
  /** Includes `system:authenticated`, as kube-apiserver adds it. */
  groups: string[];
  /** How the user authenticated. */
  method: 'token' | 'x509' | 'oidc' | 'aws' | 'google' | 'azure';
}

/**
 * One OIDC issuer, as a `jwt` entry of kube-apiserver's AuthenticationConfiguration
 * (or the `--oidc-*` flags). ID tokens must be signed by one of `keys`, name this
 * `issuer` in `iss`, hold one of `audiences` in `aud`, and be within `nbf`..`exp`.
 */
export interface OidcIssuerOptions {
  /** `--oidc-issuer-url`: must equal the token's `iss`. */
  issuer: string;
  /** `--oidc-client-id` (one or more): the token's `aud` must hold one. */
  audiences: string[];
  /** The issuer's public keys: a JWKS document (as served at jwks_uri) or key objects. */
  keys: JSONWebKeySet | KeyObject[];
  /** `--oidc-username-claim`; default `sub`. */
  usernameClaim?: string;
  /**
   * `--oidc-username-prefix`. Unset: `<issuer>#` unless the claim is `email`, as kube-apiserver does;
   * `'-'`: no prefix.
   */
  usernamePrefix?: string;
  /** `--oidc-groups-claim`; no groups are mapped when unset. */
  groupsClaim?: string;
  /** `--oidc-groups-prefix`; default none. */
  groupsPrefix?: string;
  /** `--oidc-required-claim`: claims that must hold exactly these values. */
  requiredClaims?: Record<string, string>;
}

/**
 * An IAM identity that the simulated STS knows: what `GetCallerIdentity` answers for
 * requests signed with this access key.
 */
export interface AwsIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  /** Session credentials only: the token STS issued with them (the request's X-Amz-Security-Token). */
  sessionToken?: string;
  /** The caller ARN: `arn:aws:iam::<account>:user/<name>`, or `arn:aws:sts::<account>:assumed-role/<role>/<session>` for session credentials. */
  arn: string;
  /** Session credentials only: when STS stops accepting them (ExpiredToken). */
  expiration?: Date;
}

/** An IAM role the simulated STS lets callers assume (`AssumeRole`), as the role's trust policy says. */
export interface AwsRole {
  /** `arn:aws:iam::<account>:role/<name>`. */
  arn: string;
  /** Caller ARNs (canonical: IAM users, or roles for assumed-role sessions) it trusts; unset: every identity STS knows. */
  trustedPrincipals?: string[];
  /** The `sts:ExternalId` the trust policy requires. */
  externalId?: string;
  /** Lifetime of the session credentials, in seconds; default 3600 (short ones let tests see them expire). */
  sessionDurationSeconds?: number;
}

/** A `mapUsers` entry of the aws-auth ConfigMap. */
export interface AwsUserMapping {
  userarn: string;
  /** May use `{{AccountID}}` and `{{SessionName}}`, as aws-iam-authenticator does. */
  username: string;
  groups?: string[];
}

/** A `mapRoles` entry of the aws-auth ConfigMap: matches the role of an assumed-role ARN. */
export interface AwsRoleMapping {
  rolearn: string;
  /** May use `{{AccountID}}`, `{{SessionName}}` and `{{SessionNameRaw}}`, as aws-iam-authenticator does. */
  username: string;
  groups?: string[];
}

/**
 * aws-iam-authenticator tokens (`k8s-aws-v1.<base64url presigned STS GetCallerIdentity URL>`),
 * as EKS accepts them. The simulator verifies the SigV4 signature itself.
 */
export interface AwsIamAuthOptions {
  /** The cluster id tokens must sign as `x-k8s-aws-id` (EKS: the cluster name). */
  clusterId: string;
  /** Access keys the simulated STS knows. */
  identities: AwsIdentity[];
  /**
   * Roles the simulated STS (at `sim.awsStsEndpoint`, for AWS_ENDPOINT_URL_STS) lets callers assume;
   * their session credentials then sign tokens that mapRoles maps.
   */
  roles?: AwsRole[];
  mapUsers?: AwsUserMapping[];
  mapRoles?: AwsRoleMapping[];
  /**
   * How long after its X-Amz-Date a token is accepted; default 900 (STS's 15 minutes). A shorter
   * one lets a test see tokens expire mid-job without waiting a quarter of an hour.
   */
  tokenLifetimeSeconds?: number;
}

/**
 * Google Workload Identity Federation, which GoogleServiceAccountStrategy reaches with an
 * `external_account` credential JSON (its `token_url` can point here; a service-account key's
 * `token_uri` cannot: google-auth-library's gtoken always posts to www.googleapis.com).
 */
export interface GoogleFederationOptions {
  /** The pool provider, `//iam.googleapis.com/projects/<n>/locations/global/workloadIdentityPools/<pool>/providers/<provider>`. */
  audience: string;
  /** The OIDC issuer whose ID tokens the provider accepts as subject tokens (prefix options are ignored). */
  subjectIssuer: OidcIssuerOptions;
  /** Lifetime of issued access tokens; default 3600. */
  tokenLifetimeSeconds?: number;
}

/** A Microsoft Entra / ADFS app registration whose client-secret grant the simulator's authority accepts. */
export interface AzureClient {
  clientId: string;
  clientSecret: string;
  /** The Kubernetes user name; default the client id. */
  username?: string;
  groups?: string[];
}

/**
 * An authority for @azure/identity's EnvironmentCredential (what DefaultAzureCredential tries first):
 * AZURE_TENANT_ID=adfs, AZURE_AUTHORITY_HOST=`sim.azureAuthorityHost`, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET,
 * and the process must trust `sim.caCert` (NODE_EXTRA_CA_CERTS), since identity requires https.
 */
export interface AzureAuthOptions {
  clients: AzureClient[];
  /** Lifetime of issued access tokens; default 3600. */
  tokenLifetimeSeconds?: number;
}

/** Authentication methods beyond the admin token, each as kube-apiserver configures it. */
export interface KubeSimAuthOptions {
  /** OIDC issuers whose ID tokens authenticate users. */
  oidc?: OidcIssuerOptions[];
  /** aws-iam-authenticator tokens. */
  aws?: AwsIamAuthOptions;
  /** Google Workload Identity Federation, through the simulator's STS token endpoint. */
  google?: GoogleFederationOptions;
  /** Azure client-secret credentials, through the simulator's authority (https only). */
  azure?: AzureAuthOptions;
  /** RBAC bindings for users and groups. */
  bindings?: RbacBinding[];
}

/** The subject of a client certificate: CN is the user, each O a group, as kube-apiserver reads them. */
export interface ClientCertificateSubject {
  user: string;
  groups?: string[];
  /** Validity; default now .. 30 days from now. */
  notBefore?: Date;
  notAfter?: Date;
}

/** A PEM certificate and its PEM (PKCS#8) private key. */
export interface CertificateAndKey {
  cert: string;
  key: string;
}

/** How a kubeconfig user authenticates: a bearer token, or a client certificate. */
export type KubeconfigCredential =
  | string
  | { token: string }
  | { clientCertificate: string; clientKey: string };

/** An `external_account` credential JSON, for `kubernetes.googleServiceAccountCredentials`. */
export interface GoogleExternalAccountCredentials {
  type: 'external_account';
  audience: string;
  subject_token_type: string;
  token_url: string;
  credential_source: { file: string };
}
