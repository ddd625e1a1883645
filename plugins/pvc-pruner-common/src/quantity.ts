const SUFFIXES: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY =
  /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?$/;

/**
 * Parses a Kubernetes resource quantity (`20Gi`, `1.5G`, `500M`, `1e9`) into
 * a number of base units (bytes for storage). Returns undefined when the
 * text is not a quantity.
 *
 * @public
 */
export function parseQuantity(
  value: string | number | undefined,
): number | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = value.trim().match(QUANTITY);
  if (!m) return undefined;
  const base = Number(m[1]);
  if (m[2]) return base * 10 ** Number(m[2].slice(1));
  return Math.round(base * SUFFIXES[m[3] ?? ''] * 1000) / 1000;
}

/**
 * Formats bytes with binary units as Kubernetes users read them, e.g. `20 GiB`.
 *
 * @public
 */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 || Number.isInteger(value) ? 0 : 1;
  return `${value.toFixed(digits)} ${units[unit]}`;
}

/**
 * The bytes a claim occupies: its bound capacity, else what it requested.
 *
 * @public
 */
export function claimBytes(pvc: {
  capacityBytes?: number;
  requestedBytes: number;
}): number {
  return pvc.capacityBytes ?? pvc.requestedBytes;
}
