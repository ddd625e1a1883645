import { LoggerService } from '@backstage/backend-plugin-api';
import { Config } from '@backstage/config';
import {
  AksStrategy,
  AnonymousStrategy,
  AwsIamStrategy,
  AzureIdentityStrategy,
  DispatchStrategy,
  GoogleServiceAccountStrategy,
  GoogleStrategy,
  OidcStrategy,
  ServiceAccountStrategy,
} from '@backstage/plugin-kubernetes-backend';
import {
  ANNOTATION_KUBERNETES_AUTH_PROVIDER,
  ANNOTATION_KUBERNETES_OIDC_TOKEN_PROVIDER,
  KubernetesRequestAuth,
} from '@backstage/plugin-kubernetes-common';
import type {
  AuthenticationStrategy,
  ClusterDetails,
} from '@backstage/plugin-kubernetes-node';
import { KubeConfig } from '@kubernetes/client-node';
import { ClusterRequestError } from '../KubeGateway';
import { CredentialSource } from '../ClusterConnection';

/** Providers whose token the user's browser sends (Backstage's "client side" providers). */
export const CLIENT_SIDE_PROVIDERS = ['google', 'oidc', 'aks'];

/**
 * ServiceAccountStrategy loads client-node with a dynamic import() on each
 * call, which Jest cannot run (it needs --experimental-vm-modules); it takes
 * the module from this field instead, as its own tests do. It is the same
 * client-node this package loads.
 */
function serviceAccountStrategy() {
  return Object.assign(new ServiceAccountStrategy(), {
    injectedKubernetesClient: { KubeConfig },
  });
}

/** The providers Backstage's Kubernetes backend registers by default, with its own strategy classes. */
function defaultStrategies(config: Config, logger: LoggerService) {
  return new Map<string, AuthenticationStrategy>([
    ['aks', new AksStrategy()],
    ['aws', new AwsIamStrategy({ config })],
    ['azure', new AzureIdentityStrategy(logger)],
    ['google', new GoogleStrategy()],
    ['googleServiceAccount', new GoogleServiceAccountStrategy({ config })],
    ['localKubectlProxy', new AnonymousStrategy()],
    ['oidc', new OidcStrategy()],
    ['serviceAccount', serviceAccountStrategy()],
  ]);
}

export const authProviderOf = (cluster: ClusterDetails) =>
  cluster.authMetadata[ANNOTATION_KUBERNETES_AUTH_PROVIDER];

/** What the card shows and sends for a client-side cluster: the token key upstream's frontend uses. */
export function userTokenKeyOf(cluster: ClusterDetails): string | undefined {
  const provider = authProviderOf(cluster);
  if (!CLIENT_SIDE_PROVIDERS.includes(provider)) return undefined;
  return provider === 'oidc'
    ? `oidc.${cluster.authMetadata[ANNOTATION_KUBERNETES_OIDC_TOKEN_PROVIDER]}`
    : provider;
}

function hasUserToken(cluster: ClusterDetails, auth: KubernetesRequestAuth) {
  const provider = authProviderOf(cluster);
  if (provider !== 'oidc') return Boolean(auth[provider]);
  const tokens = auth.oidc as Record<string, unknown> | undefined;
  return Boolean(
    tokens?.[cluster.authMetadata[ANNOTATION_KUBERNETES_OIDC_TOKEN_PROVIDER]],
  );
}

/**
 * Cluster credentials through Backstage's own AuthenticationStrategy classes,
 * behind a DispatchStrategy keyed by `authProvider`. Strategies added through
 * pvc-pruner's extension point replace the defaults, exactly as strategies
 * added to the Kubernetes backend's do, so both reach the same clusters.
 */
export class ClusterAuth {
  private constructor(
    private readonly strategies: Map<string, AuthenticationStrategy>,
    readonly strategy: DispatchStrategy,
  ) {}

  static create(options: {
    config: Config;
    logger: LoggerService;
    extraStrategies?: Map<string, AuthenticationStrategy>;
  }): ClusterAuth {
    // As in the Kubernetes backend: strategies added through the extension point replace the defaults.
    const strategies = options.extraStrategies?.size
      ? new Map(options.extraStrategies)
      : defaultStrategies(options.config, options.logger);
    return new ClusterAuth(
      strategies,
      new DispatchStrategy({
        authStrategyMap: Object.fromEntries(strategies),
      }),
    );
  }

  knows(authProvider: string): boolean {
    return this.strategies.has(authProvider);
  }

  isClientSide(cluster: ClusterDetails): boolean {
    return CLIENT_SIDE_PROVIDERS.includes(authProviderOf(cluster));
  }

  /**
   * True when asking the strategy again gives the same credential: a token
   * from app-config, kubectl proxy, or a user's token (fixed for the request
   * or job that carries it). Anything else may expire and is asked per request.
   */
  isStatic(cluster: ClusterDetails): boolean {
    const provider = authProviderOf(cluster);
    if (provider === 'serviceAccount')
      return Boolean(cluster.authMetadata.serviceAccountToken);
    return provider === 'localKubectlProxy' || this.isClientSide(cluster);
  }

  /**
   * The credentials of a cluster, asked from its strategy each time they are
   * called for. Errors name the cluster and provider, never a credential.
   */
  credentialSource(
    cluster: ClusterDetails,
    requestAuth: KubernetesRequestAuth,
  ): CredentialSource {
    const provider = authProviderOf(cluster);
    if (!this.knows(provider)) {
      throw new ClusterRequestError(
        cluster.name,
        `cluster "${cluster.name}" uses authProvider "${provider}", which pvc-pruner has no strategy for; add one with pvcPrunerAuthStrategyExtensionPoint, as for the Kubernetes backend`,
      );
    }
    if (this.isClientSide(cluster) && !hasUserToken(cluster, requestAuth)) {
      throw new ClusterRequestError(
        cluster.name,
        `cluster "${
          cluster.name
        }" authenticates each user with ${userTokenKeyOf(
          cluster,
        )}, and this request carried no such token; sign in to that provider and reload`,
        401,
        'Unauthorized',
      );
    }
    return () =>
      this.strategy.getCredential(cluster, requestAuth).catch(e => {
        throw new ClusterRequestError(
          cluster.name,
          `could not get ${provider} credentials for cluster "${
            cluster.name
          }": ${(e as Error).message}`,
        );
      });
  }
}
