import {
  ApiException,
  PromiseHttpLibrary,
  RequestContext,
  ResponseContext,
} from '@kubernetes/client-node';
import { Dispatcher, request } from 'undici';
import { ClusterConnection } from './ClusterConnection';
import { ResponseTooLargeError } from './responseLimits';

type ResponseData = Dispatcher.ResponseData;

/** A line of a watch stream that is not a JSON event. */
export class MalformedWatchEventError extends Error {
  constructor() {
    super('a watch event that is not JSON');
    this.name = 'MalformedWatchEventError';
  }
}

function headersOf(res: ResponseData): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers))
    if (value !== undefined)
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

/**
 * The body of an answer, refused as soon as it is known to exceed `maxBytes`:
 * by its Content-Length before reading, or while it streams. The connection
 * of a refused body is closed, so the server cannot keep sending.
 */
async function readBody(res: ResponseData, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers['content-length']);
  if (declared > maxBytes) {
    res.body.destroy();
    throw new ResponseTooLargeError(maxBytes, 'answer');
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxBytes) {
      res.body.destroy();
      throw new ResponseTooLargeError(maxBytes, 'answer');
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, bytes);
}

/**
 * Splits a watch stream into its lines (one JSON event each), refusing a
 * line longer than `maxLineBytes` before buffering more of it. A newline
 * byte never occurs inside a UTF-8 sequence, so lines are cut on bytes.
 */
class WatchLines {
  private parts: Buffer[] = [];
  private pending = 0;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
  ) {}

  push(chunk: Buffer) {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const end = newline < 0 ? chunk.length : newline;
      this.pending += end - start;
      if (this.pending > this.maxLineBytes)
        throw new ResponseTooLargeError(this.maxLineBytes, 'watch event');
      if (end > start) this.parts.push(chunk.subarray(start, end));
      if (newline < 0) return;
      const line = Buffer.concat(this.parts, this.pending).toString('utf8');
      this.parts = [];
      this.pending = 0;
      if (line.trim()) this.onLine(line);
      start = newline + 1;
    }
  }
}

/**
 * Plain requests to a cluster's API, parsed with JSON.parse, over keep-alive
 * undici connections. A scan reads thousands of claims and pods and a volume
 * per orphan: client-node's ObjectSerializer and node:http's client were most
 * of its CPU time (`npm run bench:backend`). The objects keep the API's
 * shape; timestamps stay strings. Every answer has a size limit, every watch
 * event too: this is the only way pvc-pruner reaches a cluster (client-node's
 * typed API clients send through {@link RawApiClient.httpLibrary}).
 */
export class RawApiClient {
  constructor(private readonly connection: ClusterConnection) {}

  /**
   * GETs a path of the cluster's API, with the size of its body; a non-2xx
   * answer throws an ApiException, an abort an AbortError, a body over
   * `maxBytes` a ResponseTooLargeError.
   */
  async getJson<T>(
    path: string,
    options: { signal?: AbortSignal; maxBytes: number },
  ): Promise<{ body: T; bytes: number }> {
    const res = await this.request('GET', path, options);
    const body = await this.okBody(res, options.maxBytes);
    return { body: JSON.parse(body.toString('utf8')) as T, bytes: body.length };
  }

  /**
   * DELETEs a path with a body of DeleteOptions, over the connections the
   * reads right before it used, so no connection set-up lies between
   * `beforeSend` and the request leaving. `beforeSend` runs once the
   * credentials are applied; if it throws, nothing is sent.
   */
  async deleteJson<T>(
    path: string,
    body: unknown,
    options: {
      signal?: AbortSignal;
      beforeSend?: () => void;
      maxBytes: number;
    },
  ): Promise<T> {
    return this.sendJson<T>('DELETE', path, body, options);
  }

  /** POSTs a JSON body (a create); a non-2xx answer throws an ApiException, a body over `maxBytes` a ResponseTooLargeError. */
  async postJson<T>(
    path: string,
    body: unknown,
    options: { signal?: AbortSignal; maxBytes: number },
  ): Promise<T> {
    return this.sendJson<T>('POST', path, body, options);
  }

  /** PATCHes a path with a JSON merge patch (RFC 7386); a non-2xx answer throws an ApiException. `beforeSend` as for `deleteJson`. */
  async mergePatchJson<T>(
    path: string,
    body: unknown,
    options: {
      signal?: AbortSignal;
      beforeSend?: () => void;
      maxBytes: number;
    },
  ): Promise<T> {
    return this.sendJson<T>(
      'PATCH',
      path,
      body,
      options,
      'application/merge-patch+json',
    );
  }

  private async sendJson<T>(
    method: 'POST' | 'DELETE' | 'PATCH',
    path: string,
    body: unknown,
    options: {
      signal?: AbortSignal;
      beforeSend?: () => void;
      maxBytes: number;
    },
    contentType = 'application/json',
  ): Promise<T> {
    const res = await this.request(method, path, {
      ...options,
      headers: { 'content-type': contentType },
      body: JSON.stringify(body),
    });
    return JSON.parse(
      (await this.okBody(res, options.maxBytes)).toString('utf8'),
    ) as T;
  }

  /**
   * Opens a watch (`?watch=true`) and calls `onEvent` with each event as it
   * arrives. Resolves once the cluster answered 200; rejects with an
   * ApiException carrying the Status for any other answer (410 when the
   * version expired). `onEnd` is called once when the
   * stream ends: with no error when the server closed it, with the error when
   * it broke, sent an event over `maxLineBytes` or one that is not JSON. An
   * abort through `signal` ends it without a call.
   */
  async watch(
    path: string,
    options: {
      signal: AbortSignal;
      maxLineBytes: number;
      /** For the Status of a refusal. */
      maxBytes: number;
      onEvent: (event: { type: string; object: unknown }) => void;
      onEnd: (error?: Error) => void;
    },
  ): Promise<void> {
    // A quiet watch may send nothing for minutes: no body timeout, as client-node's Watch.
    const res = await this.request('GET', path, {
      signal: options.signal,
      bodyTimeout: 0,
    });
    if (res.statusCode !== 200) {
      const text = await readBody(res, options.maxBytes).then(
        b => b.toString('utf8'),
        () => '',
      );
      throw new ApiException(
        res.statusCode,
        `HTTP ${res.statusCode}`,
        text,
        {},
      );
    }
    const lines = new WatchLines(options.maxLineBytes, line => {
      let event: { type: string; object: unknown };
      try {
        event = JSON.parse(line);
      } catch {
        throw new MalformedWatchEventError();
      }
      options.onEvent(event);
    });
    void (async () => {
      try {
        for await (const chunk of res.body) lines.push(chunk as Buffer);
        options.onEnd();
      } catch (e) {
        res.body.destroy();
        if (!options.signal.aborted) options.onEnd(e as Error);
      }
    })();
  }

  /**
   * A transport for client-node's typed API clients (the Lease calls), with
   * this connection's credentials and the same size limit on answers. Their
   * configuration must carry no auth methods: the credentials are applied
   * here, once per request.
   */
  httpLibrary(maxBytes: number): PromiseHttpLibrary {
    return {
      send: async (context: RequestContext) => {
        const url = new URL(context.getUrl());
        const res = await this.request(
          context.getHttpMethod(),
          `${url.pathname}${url.search}`,
          {
            headers: Object.fromEntries(
              Object.entries(context.getHeaders()).map(([k, v]) => [
                k.toLowerCase(),
                v,
              ]),
            ),
            body: context.getBody() as string | undefined,
            signal: context.getSignal(),
          },
        );
        const body = await readBody(res, maxBytes);
        return new ResponseContext(res.statusCode, headersOf(res), {
          text: async () => body.toString('utf8'),
          binary: async () => body,
        });
      },
    };
  }

  private async okBody(res: ResponseData, maxBytes: number): Promise<Buffer> {
    const body = await readBody(res, maxBytes);
    if (res.statusCode < 200 || res.statusCode >= 300)
      throw new ApiException(
        res.statusCode,
        `HTTP ${res.statusCode}`,
        body.toString('utf8'),
        {},
      );
    return body;
  }

  private async request(
    method: string,
    path: string,
    options: {
      body?: string;
      headers?: Record<string, string>;
      signal?: AbortSignal;
      beforeSend?: () => void;
      bodyTimeout?: number;
    },
  ): Promise<ResponseData> {
    const { headers, dispatcher } = await this.connection.forUndici();
    options.beforeSend?.();
    return request(`${this.connection.endpoint.server}${path}`, {
      method: method as Dispatcher.HttpMethod,
      // Lower-case names, so the credentials' and the caller's replace these rather than repeat them.
      headers: { accept: 'application/json', ...options.headers, ...headers },
      body: options.body,
      dispatcher,
      signal: options.signal,
      ...(options.bodyTimeout !== undefined
        ? { bodyTimeout: options.bodyTimeout }
        : {}),
    });
  }
}
