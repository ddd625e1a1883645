import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { KubeConfig, RequestContext } from '@kubernetes/client-node';

/**
 * Makes client-node's calls for this KubeConfig share one keep-alive agent.
 * client-node makes a new agent, and so a new TLS handshake, for every
 * request; a prune makes hundreds of them. Proxy agents are left alone.
 */
export function shareOneKeepAliveAgent(kubeConfig: KubeConfig) {
  let agent: HttpAgent | HttpsAgent | undefined;
  const reuse = (fresh: unknown) => {
    if (fresh instanceof HttpsAgent) {
      agent ??= new HttpsAgent({ ...fresh.options, keepAlive: true });
    } else if (fresh instanceof HttpAgent && fresh.constructor === HttpAgent) {
      agent ??= new HttpAgent({ keepAlive: true });
    } else {
      return undefined;
    }
    return agent;
  };
  const original = kubeConfig.applySecurityAuthentication.bind(kubeConfig);
  kubeConfig.applySecurityAuthentication = async (context: RequestContext) => {
    await original(context);
    const pooled = reuse(context.getAgent());
    if (pooled) context.setAgent(pooled);
  };
}
