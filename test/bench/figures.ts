import { Dispatcher, request } from 'undici';

/** Helpers the benchmark scripts share: how they fetch and how they print figures. */

export const ms = (n: number) => `${n.toFixed(0)} ms`;

/** The value at fraction `p` (0..1) of the sorted values. */
export const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[
    Math.min(xs.length - 1, Math.floor(xs.length * p))
  ];

export const median = (xs: number[]) => percentile(xs, 0.5);

/** GETs JSON, throwing on anything but a 200. */
export async function getJson(
  url: string,
  dispatcher: Dispatcher,
  headers: Record<string, string> = {},
): Promise<any> {
  const res = await request(url, {
    headers: { accept: 'application/json', ...headers },
    dispatcher,
  });
  const body = (await res.body.json()) as any;
  if (res.statusCode !== 200)
    throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(body)}`);
  return body;
}
