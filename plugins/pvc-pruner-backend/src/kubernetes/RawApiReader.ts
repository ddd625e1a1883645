import { ApiException } from '@kubernetes/client-node';
import { request } from 'undici';
import { ClusterConnection } from './ClusterConnection';

/**
 * Plain GETs of a cluster's API, parsed with JSON.parse, over keep-alive
 * undici connections. A scan reads thousands of claims and pods and a volume
 * per orphan: client-node's ObjectSerializer and node:http's client were most
 * of its CPU time (`npm run bench:backend`). The objects keep the API's
 * shape; timestamps stay strings.
 */
export class RawApiReader {
  constructor(private readonly connection: ClusterConnection) {}

  /** GETs a path of the cluster's API; a non-2xx answer throws an ApiException, an abort an AbortError. */
  async getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
    const { headers, dispatcher } = await this.connection.forUndici();
    const res = await request(`${this.connection.endpoint.server}${path}`, {
      headers: { ...headers, accept: 'application/json' },
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
}
