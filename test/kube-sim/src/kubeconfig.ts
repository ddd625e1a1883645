import { stringify } from 'yaml';

/** A kubeconfig that kubectl and @kubernetes/client-node use as it is. */
export function kubeconfigYaml(options: {
  server: string;
  token: string;
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
            ? {
                'certificate-authority-data': Buffer.from(
                  options.caCert,
                ).toString('base64'),
              }
            : {}),
        },
      },
    ],
    users: [{ name: `${name}-admin`, user: { token: options.token } }],
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
