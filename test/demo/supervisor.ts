/**
 * Keeps one process running: when it ends, starts it again after a delay
 * that doubles while it keeps dying quickly, and gives up when it died too
 * often in a short time (a crash loop is not fixed by restarting).
 */

/** A started process, as the supervisor sees it. */
export interface SupervisedProcess {
  /** Resolves, with how it ended (e.g. `signal SIGKILL`), once it and everything it started are gone. */
  readonly ended: Promise<string>;
}

export interface RestartPolicy {
  /** The first delay; it doubles with each quick death. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A process that ran this long was healthy: the next delay starts from initialDelayMs again. */
  healthyAfterMs: number;
  /** Give up after this many restarts within windowMs. */
  maxRestarts: number;
  windowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1000,
  maxDelayMs: 30_000,
  healthyAfterMs: 60_000,
  maxRestarts: 5,
  windowMs: 5 * 60_000,
};

export interface SupervisorOptions {
  /** What the process is, for messages: `backend`. */
  name: string;
  launch: () => SupervisedProcess;
  say: (line: string) => void;
  /** Called once when the supervisor stops restarting because of a crash loop. */
  onGiveUp: () => void;
  policy?: Partial<RestartPolicy>;
  now?: () => number;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(2))} s`;

export class Supervisor {
  private readonly policy: RestartPolicy;
  private readonly now: () => number;
  private readonly restarts: number[] = [];
  private delayMs: number;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private launches = 0;

  static create(options: SupervisorOptions): Supervisor {
    return new Supervisor(options);
  }

  private constructor(private readonly options: SupervisorOptions) {
    this.policy = { ...DEFAULT_RESTART_POLICY, ...options.policy };
    this.now = options.now ?? Date.now;
    this.delayMs = this.policy.initialDelayMs;
  }

  /** How many times the process was launched, the first start included. */
  get launched() {
    return this.launches;
  }

  start() {
    if (this.stopped) return;
    this.launches++;
    const startedAt = this.now();
    const process = this.options.launch();
    void process.ended.then(how => this.onEnded(how, startedAt));
  }

  /** No more restarts (a pending one is cancelled); stopping the process itself is the caller's. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private onEnded(how: string, startedAt: number) {
    if (this.stopped) return;
    const { name, say } = this.options;
    const at = this.now();
    if (at - startedAt >= this.policy.healthyAfterMs)
      this.delayMs = this.policy.initialDelayMs;
    while (this.restarts.length && at - this.restarts[0] > this.policy.windowMs)
      this.restarts.shift();
    if (this.restarts.length >= this.policy.maxRestarts) {
      say(
        `[${name}] ${name} exited (${how}) after ${
          this.restarts.length
        } restarts within ${seconds(
          this.policy.windowMs,
        )}; not restarting it again`,
      );
      this.stop();
      this.options.onGiveUp();
      return;
    }
    this.restarts.push(at);
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.policy.maxDelayMs);
    say(`[${name}] ${name} exited (${how}), restarting in ${seconds(delay)}`);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, delay);
  }
}
