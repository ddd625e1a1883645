import { ApiError } from './errors';

/** A rule that makes matching requests fail or slow down. */
export interface FaultRule {
  /** Verb to match (get, list, watch, create, update, patch, delete, deletecollection); unset matches all. */
  verb?: string;
  /** Resource to match, e.g. 'persistentvolumeclaims' or 'statefulsets/scale'; unset matches all. */
  resource?: string;
  namespace?: string;
  /** HTTP status to answer with (e.g. 500, 429, 403, 409). */
  status?: number;
  /** Fraction of matching requests that fail, 0..1 (default 1). */
  rate?: number;
  /** Fail only this many times, then the rule is spent. */
  times?: number;
  /** Extra latency for matching requests, in milliseconds. */
  latencyMs?: number;
  /** For status 429: the Retry-After the answer carries, in seconds (default 1). */
  retryAfterSeconds?: number;
  message?: string;
}

export interface RequestLogEntry {
  time: string;
  user?: string;
  /** Why authentication failed (a 401), per method; never quotes the credential. */
  authError?: string;
  verb: string;
  method: string;
  path: string;
  query: string;
  resource?: string;
  namespace?: string;
  status: number;
  durationMs: number;
}

const REASONS: Record<number, [string, string]> = {
  400: ['BadRequest', 'injected fault: bad request'],
  401: ['Unauthorized', 'Unauthorized'],
  403: ['Forbidden', 'injected fault: forbidden'],
  404: ['NotFound', 'injected fault: not found'],
  409: ['Conflict', 'injected fault: conflict'],
  410: ['Expired', 'injected fault: expired'],
  422: ['Invalid', 'injected fault: invalid'],
  429: [
    'TooManyRequests',
    'injected fault: too many requests, please try again later',
  ],
  500: ['InternalError', 'Internal error occurred: injected fault'],
  503: ['ServiceUnavailable', 'injected fault: service unavailable'],
  504: ['Timeout', 'injected fault: timeout'],
};

/** Injected failures and latency, and the log of every request served. */
export class Faults {
  private rules: Array<FaultRule & { id: number }> = [];
  private nextId = 1;
  private log: RequestLogEntry[] = [];
  latencyMs = 0;

  constructor(
    private readonly logLimit = 200000,
    private readonly random = Math.random,
  ) {}

  add(rule: FaultRule): number {
    const id = this.nextId++;
    this.rules.push({ ...rule, id });
    return id;
  }

  remove(id: number) {
    this.rules = this.rules.filter(r => r.id !== id);
  }

  clear() {
    this.rules = [];
    this.latencyMs = 0;
  }

  list(): FaultRule[] {
    return this.rules.map(r => ({ ...r }));
  }

  /** The delay and the error (if any) for a request. Spends `times` on rules that fire. */
  evaluate(req: { verb: string; resource?: string; namespace?: string }): {
    delayMs: number;
    error?: ApiError;
  } {
    let delayMs = this.latencyMs;
    let error: ApiError | undefined;
    for (const rule of this.rules) {
      if (rule.verb && rule.verb !== req.verb) continue;
      if (rule.resource && rule.resource !== req.resource) continue;
      if (rule.namespace && rule.namespace !== req.namespace) continue;
      delayMs += rule.latencyMs ?? 0;
      if (error || rule.status === undefined) continue;
      if (this.random() >= (rule.rate ?? 1)) continue;
      if (rule.times !== undefined) {
        if (rule.times <= 0) continue;
        rule.times -= 1;
      }
      const [reason, message] = REASONS[rule.status] ?? [
        'InternalError',
        `injected fault ${rule.status}`,
      ];
      error =
        rule.status === 429
          ? new ApiError(429, reason, rule.message ?? message, {
              retryAfterSeconds: rule.retryAfterSeconds ?? 1,
            })
          : new ApiError(rule.status, reason, rule.message ?? message);
    }
    return { delayMs, error };
  }

  private readonly served = new Set<(entry: RequestLogEntry) => void>();

  record(entry: RequestLogEntry) {
    this.log.push(entry);
    if (this.log.length > this.logLimit)
      this.log.splice(0, this.log.length - this.logLimit);
    for (const listener of this.served) listener(entry);
  }

  /** Calls `listener` as each request is logged (answered), before the next one is handled; returns how to stop. */
  onServed(listener: (entry: RequestLogEntry) => void): () => void {
    this.served.add(listener);
    return () => this.served.delete(listener);
  }

  requests(): RequestLogEntry[] {
    return [...this.log];
  }

  clearRequests() {
    this.log = [];
  }
}
