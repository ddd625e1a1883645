import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import {
  Agent as HttpsAgent,
  request as httpsRequest,
  RequestOptions,
} from 'node:https';
import {
  ApiException,
  KubeConfig,
  RequestContext,
} from '@kubernetes/client-node';

/**
 * One keep-alive agent per cluster. client-node makes a new agent, and so a
 * new TLS handshake, for every request; a scan makes hundreds of reads.
 * The pool also serves raw JSON reads: lists of thousands of pods and claims
 * are parsed with JSON.parse instead of client-node's much slower
 * ObjectSerializer (the objects keep the API's shape; timestamps stay strings).
 */
export class ConnectionPool {
  private agent?: HttpAgent | HttpsAgent;

  constructor(private readonly kubeConfig: KubeConfig) {
    const original = kubeConfig.applySecurityAuthentication.bind(kubeConfig);
    kubeConfig.applySecurityAuthentication = async (
      context: RequestContext,
    ) => {
      await original(context);
      const pooled = this.reuse(context.getAgent());
      if (pooled) context.setAgent(pooled);
    };
  }

  /** The shared agent for a plain agent client-node made; undefined for proxy agents, left alone. */
  private reuse(fresh: unknown): HttpAgent | HttpsAgent | undefined {
    if (fresh instanceof HttpsAgent) {
      this.agent ??= new HttpsAgent({ ...fresh.options, keepAlive: true });
    } else if (fresh instanceof HttpAgent && fresh.constructor === HttpAgent) {
      this.agent ??= new HttpAgent({ keepAlive: true });
    } else {
      return undefined;
    }
    return this.agent;
  }

  /** GETs a path of the cluster's API and parses the JSON; a non-2xx answer throws an ApiException. */
  async getJson<T>(path: string): Promise<T> {
    const options: RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(options);
    options.agent = this.reuse(options.agent) ?? options.agent;
    const server =
      this.kubeConfig.getCurrentCluster()?.server.replace(/\/+$/, '') ?? '';
    const url = new URL(`${server}${path}`);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const req = send(
        url,
        {
          ...options,
          method: 'GET',
          headers: { ...options.headers, Accept: 'application/json' },
        },
        res => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              reject(new ApiException(status, `HTTP ${status}`, text, {}));
              return;
            }
            try {
              resolve(JSON.parse(text) as T);
            } catch (e) {
              reject(e);
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  }
}
