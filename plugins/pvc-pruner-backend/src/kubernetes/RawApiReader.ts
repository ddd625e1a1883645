import type { RequestOptions } from 'node:https';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';

interface Connection {
  server: string;
  headers: Record<string, string>;
  dispatcher: Agent;
}

/**
 * Plain GETs of a cluster's API, parsed with JSON.parse, over one keep-alive
 * undici agent. A scan reads thousands of claims and pods and a volume per
 * orphan: client-node's ObjectSerializer and node:http's client were most of
 * its CPU time (`npm run bench:backend`). The objects keep the API's shape;
 * timestamps stay strings.
 */
export class RawApiReader {
  private connection?: Promise<Connection>;

  constructor(private readonly kubeConfig: KubeConfig) {}

  /** GETs a path of the cluster's API; a non-2xx answer throws an ApiException, an abort an AbortError. */
  async getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
    const { server, headers, dispatcher } = await this.connect();
    const res = await request(`${server}${path}`, {
      headers,
      dispatcher,
      signal,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const body = await res.body.text();
      throw new ApiException(
        res.statusCode,
        `HTTP ${res.statusCode}`,
        body,
        {},
      );
    }
    return (await res.body.json()) as T;
  }

  // Credentials are applied once, not per request: ClusterRegistry's are static (a token and a CA from app-config).
  private connect(): Promise<Connection> {
    this.connection ??= (async () => {
      const options: RequestOptions = {};
      await this.kubeConfig.applyToHTTPSOptions(options);
      return {
        server:
          this.kubeConfig.getCurrentCluster()?.server.replace(/\/+$/, '') ?? '',
        headers: {
          ...(options.headers as Record<string, string>),
          accept: 'application/json',
        },
        dispatcher: new Agent({
          connect: {
            ca: options.ca,
            cert: options.cert,
            key: options.key,
            rejectUnauthorized: options.rejectUnauthorized,
            servername: options.servername ?? undefined,
          },
        }),
      };
    })().catch(e => {
      this.connection = undefined;
      throw e;
    });
    return this.connection;
  }
}
