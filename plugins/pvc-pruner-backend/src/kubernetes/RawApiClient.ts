import { ApiException } from '@kubernetes/client-node';
import { request } from 'undici';
import { ClusterConnection } from './ClusterConnection';

/**
 * Plain requests to a cluster's API, parsed with JSON.parse, over keep-alive
 * undici connections. A scan reads thousands of claims and pods and a volume
 * per orphan: client-node's ObjectSerializer and node:http's client were most
 * of its CPU time (`npm run bench:backend`). The objects keep the API's
 * shape; timestamps stay strings.
 */
export class RawApiClient {
  constructor(private readonly connection: ClusterConnection) {}

  /** GETs a path of the cluster's API; a non-2xx answer throws an ApiException, an abort an AbortError. */
  getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
    return this.send<T>('GET', path, { signal });
  }

  /**
   * DELETEs a path with a body of DeleteOptions, over the connections the
   * reads right before it used, so no connection set-up lies between
   * `beforeSend` and the request leaving. `beforeSend` runs once the
   * credentials are applied; if it throws, nothing is sent.
   */
  deleteJson<T>(
    path: string,
    body: unknown,
    options: { signal?: AbortSignal; beforeSend?: () => void },
  ): Promise<T> {
    return this.send<T>('DELETE', path, { ...options, body });
  }

  private async send<T>(
    method: 'GET' | 'DELETE',
    path: string,
    options: { body?: unknown; signal?: AbortSignal; beforeSend?: () => void },
  ): Promise<T> {
    const { headers, dispatcher } = await this.connection.forUndici();
    options.beforeSend?.();
    const res = await request(`${this.connection.endpoint.server}${path}`, {
      method,
      headers: {
        ...headers,
        accept: 'application/json',
        ...(options.body === undefined
          ? {}
          : { 'content-type': 'application/json' }),
      },
      body:
        options.body === undefined ? undefined : JSON.stringify(options.body),
      dispatcher,
      signal: options.signal,
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const text = await res.body.text();
      throw new ApiException(
        res.statusCode,
        `HTTP ${res.statusCode}`,
        text,
        {},
      );
    }
    return (await res.body.json()) as T;
  }
}
