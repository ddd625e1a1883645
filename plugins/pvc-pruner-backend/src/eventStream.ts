import { Response } from 'express';
import {
  PruneEvent,
  TERMINAL_JOB_STATUSES,
} from 'backstage-plugin-pvc-pruner-common';
import { JobEvents } from './jobs';
import { PruneJobStore } from './database';

const POLL_MS = 500;

/**
 * What happens to a job's snapshots after the job ended (kept longer,
 * restored, expired): recorded in its log after job-finished, and streamed
 * after it too, so a replay of a finished job shows its whole history.
 */
const AFTER_FINISH_EVENTS: ReadonlySet<PruneEvent['type']> = new Set([
  'snapshot-kept',
  'snapshot-restored',
  'snapshot-expired',
] as const);
const KEEPALIVE_MS = 15000;

/**
 * Streams a job's events as text/event-stream: replays those after `after`,
 * then follows live until the job-finished event. The database is the source
 * of truth (another replica may run the job); this process's own events only
 * wake the stream early. Each frame is flushed past the compression middleware.
 */
export function streamJobEvents(options: {
  /** Only listened to: the stream ends when the client goes away. */
  req: { on(event: 'close', listener: () => void): unknown };
  res: Response;
  jobId: string;
  after: number;
  store: PruneJobStore;
  events: JobEvents;
  /** Called once when the stream ends: its job finished or its client went away. */
  onClose?: () => void;
}) {
  const { req, res, jobId, store, events } = options;
  let last = options.after;
  let closed = false;
  let pumping = false;
  let again = false;

  res.writeHead(200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  const flush = () => (res as Response & { flush?: () => void }).flush?.();
  const write = (text: string) => {
    res.write(text);
    flush();
  };
  write(': stream of pvc-pruner job events\n\n');

  const timers: NodeJS.Timeout[] = [];
  let unsubscribe = () => {};
  const close = () => {
    if (closed) return;
    closed = true;
    timers.forEach(clearInterval);
    unsubscribe();
    res.end();
    options.onClose?.();
  };
  let finished = false;
  const send = (event: PruneEvent) => {
    // After job-finished, only what became of the job's snapshots.
    if (finished && !AFTER_FINISH_EVENTS.has(event.type)) return;
    last = event.seq;
    write(
      `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(
        event,
      )}\n\n`,
    );
    if (event.type === 'job-finished') finished = true;
  };
  /**
   * True when the job finished and its job-finished event is at or before
   * `last`. A log ends there: events after it (from a run that had not yet
   * learnt that another replica ended its job) are never streamed, but for
   * those of {@link AFTER_FINISH_EVENTS} sent with job-finished.
   */
  const logEnded = async () => {
    const job = await store.getJob(jobId);
    if (!job || !TERMINAL_JOB_STATUSES.includes(job.status)) return false;
    const end = (await store.listEvents(jobId, 0)).find(
      e => e.type === 'job-finished',
    );
    return end !== undefined && end.seq <= last;
  };
  let firstPump = true;
  const pump = async () => {
    if (pumping) {
      again = true;
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        const batch = await store.listEvents(jobId, last);
        // `after` is at or past the end of a finished job's log: nothing will follow.
        if ((firstPump || batch.length === 0) && (await logEnded()))
          finished = true;
        firstPump = false;
        for (const event of batch) {
          if (closed) return;
          send(event);
        }
        // The stream ends after job-finished and the snapshot events already logged after it.
        if (finished) close();
      } while (again && !closed);
    } catch (e) {
      if (!closed)
        write(
          `event: error\ndata: ${JSON.stringify({
            message: (e as Error).message,
          })}\n\n`,
        );
    } finally {
      pumping = false;
    }
  };

  unsubscribe = events.subscribe(jobId, () => void pump());
  timers.push(setInterval(() => void pump(), POLL_MS));
  timers.push(setInterval(() => write(': keep-alive\n\n'), KEEPALIVE_MS));
  req.on('close', close);
  // A client that left while the request was checked closed before we listened.
  if (res.destroyed) {
    close();
    return;
  }
  void pump();
}
