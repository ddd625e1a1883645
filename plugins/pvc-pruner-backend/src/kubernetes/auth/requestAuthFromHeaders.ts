import type { KubernetesRequestAuth } from '@backstage/plugin-kubernetes-common';
import { HEADER_KUBERNETES_AUTH } from '@backstage/plugin-kubernetes-backend';
import type { IncomingHttpHeaders } from 'node:http';

const PREFIX = HEADER_KUBERNETES_AUTH.toLowerCase();

/**
 * The user's cluster tokens, from the headers Backstage's Kubernetes proxy
 * reads: `Backstage-Kubernetes-Authorization-<provider>` (google, aks) and
 * `Backstage-Kubernetes-Authorization-oidc-<tokenProvider>`, as
 * KubernetesBackendClient sends them. The result has the shape the
 * strategies read (`{ google }`, `{ oidc: { okta } }`).
 */
export function requestAuthFromHeaders(
  headers: IncomingHttpHeaders,
): KubernetesRequestAuth {
  const auth: KubernetesRequestAuth = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith(`${PREFIX}-`) || typeof value !== 'string') continue;
    const [provider, ...rest] = name.slice(PREFIX.length + 1).split('-');
    if (!provider) continue;
    if (rest.length === 0) {
      auth[provider] = value;
    } else {
      const nested = auth[provider];
      auth[provider] = {
        ...(typeof nested === 'object' &&
        nested !== null &&
        !Array.isArray(nested)
          ? nested
          : {}),
        [rest.join('-')]: value,
      };
    }
  }
  return auth;
}
