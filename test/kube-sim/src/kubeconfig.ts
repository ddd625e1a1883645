import { stringify } from 'yaml';
import type { KubeconfigCredential } from './auth';

const base64 = (pem: string) => Buffer.from(pem).toString('base64');

/** The `user` of a kubeconfig for a token or a client certificate. */
function kubeconfigUser(credential: KubeconfigCredential) {
  if (typeof credential === 'string') return { token: credential };
  if ('token' in credential) return { token: credential.token };
  return {
    'client-certificate-data': base64(credential.clientCertificate),
    'client-key-data': base64(credential.clientKey),
  };
}

/** A kubeconfig that kubectl and @kubernetes/client-node use as it is. */
export function kubeconfigYaml(options: {
  server: string;
  credential: KubeconfigCredential;
  caCert?: string;
  namespace?: string;
  name?: string;
}) {
  const name = options.name ?? 'kube-sim';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name,
        cluster: {
          server: options.server,
          ...(options.caCert
            ? { 'certificate-authority-data': base64(options.caCert) }
            : {}),
        },
      },
    ],
    users: [
      { name: `${name}-admin`, user: kubeconfigUser(options.credential) },
    ],
    contexts: [
      {
        name,
        context: {
          cluster: name,
          user: `${name}-admin`,
          namespace: options.namespace ?? 'default',
        },
      },
    ],
    'current-context': name,
    preferences: {},
  });
}
