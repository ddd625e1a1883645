/**
 * How much one cluster may send pvc-pruner, so that a broken or hostile API
 * server (or whatever answers at its URL) fails its own section instead of
 * exhausting the backend's memory or holding a scan forever. Constants, not
 * settings: each is far above what the largest real cluster sends, so no
 * platform team should need to change one.
 */
export interface ResponseLimits {
  /** Bytes of one answer that is not a list page: a GET of one object, a DELETE, a Lease write, an error Status. */
  objectBytes: number;
  /** Bytes of one list page. */
  pageBytes: number;
  /** Pages of one list. */
  listPages: number;
  /** Objects of one list, all its pages together; also what one watch cache holds of one kind. */
  listItems: number;
  /** Bytes of one list, all its pages together. */
  listBytes: number;
  /** How long one whole list may take, all its pages together (each page also has the request timeout). */
  listDeadlineMs: number;
  /** Bytes of one watch event, that is, one line of the watch stream. */
  watchEventBytes: number;
}

const KiB = 2 ** 10;
const MiB = 2 ** 20;
const GiB = 2 ** 30;

export const RESPONSE_LIMITS: ResponseLimits = {
  // etcd refuses values over 1.5 MiB unless told otherwise, and kube-apiserver
  // request bodies over 3 MiB: no stored object comes near this.
  objectBytes: 16 * MiB,
  // A page is 500 objects; 500 pods of 20 KiB (large ones, managedFields
  // included) are 10 MiB.
  pageBytes: 128 * MiB,
  // listItems in full pages of 500 is 2,000 pages; the rest is headroom.
  listPages: 10_000,
  // Ten times the benchmarks' 100,000 claims, pods and volumes per cluster,
  // and more than six times Kubernetes' documented limit of 150,000 pods.
  listItems: 1_000_000,
  // 150,000 pods of 10 KiB each list 1.5 GiB.
  listBytes: 4 * GiB,
  // 2,000 pages at 300 ms each; a real API server answers a page of 500 in
  // well under that, and the cache lists 300,000 objects in 10 to 30 s.
  listDeadlineMs: 10 * 60 * 1000,
  // A watch event carries one object.
  watchEventBytes: 16 * MiB,
};

/** A count of bytes as the messages say it: `16 MiB`, `64 KiB`, `512 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= GiB && bytes % GiB === 0) return `${bytes / GiB} GiB`;
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes.toLocaleString('en-US')} bytes`;
}

/** An answer larger than its limit; the gateway turns it into a ClusterRequestError naming the cluster. */
export class ResponseTooLargeError extends Error {
  constructor(
    readonly limitBytes: number,
    /** What was too large: `answer` (a whole body) or `watch event` (one line). */
    readonly part: 'answer' | 'watch event',
  ) {
    super(`${part} over ${formatBytes(limitBytes)}`);
    this.name = 'ResponseTooLargeError';
  }
}
