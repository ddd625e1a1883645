/** Whether an object's labels satisfy a selector. */
export type LabelMatcher = (
  labels: Record<string, string> | undefined,
) => boolean;

/*
 * The syntax kube-apiserver accepts (apimachinery's validation of a label
 * key and value): a key is an optional DNS-subdomain prefix and `/`, then a
 * name of at most 63 characters that starts and ends alphanumeric; a value is
 * empty or such a name. Anything else it refuses with a 400, so the cache
 * must not answer it.
 */
const NAME = String.raw`[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?`;
const DNS_LABEL = String.raw`[a-z0-9](?:[-a-z0-9]*[a-z0-9])?`;
const PREFIX = String.raw`${DNS_LABEL}(?:\.${DNS_LABEL})*`;
const KEY = String.raw`(?:${PREFIX}/)?${NAME}`;
const VALUE = `(?:${NAME})?`;
const MAX_PREFIX = 253;
const EQUALITY = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const EXISTS = new RegExp(`^(!?)\\s*(${KEY})$`);
const VALUE_ONLY = new RegExp(`^${VALUE}$`);

const validKey = (key: string) =>
  !key.includes('/') || key.indexOf('/') <= MAX_PREFIX;

/**
 * The label's value, only if the object has that label itself: a key such as
 * `constructor` or `toString` must not find what every object inherits.
 */
function labelOf(
  labels: Record<string, string> | undefined,
  key: string,
): string | undefined {
  return labels !== undefined && Object.hasOwn(labels, key)
    ? labels[key]
    : undefined;
}

/** Splits on the commas that separate requirements, not those inside `in (a,b)`. */
function requirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    if (selector[i] === '(') depth++;
    else if (selector[i] === ')') depth--;
    else if (selector[i] === ',' && depth === 0) {
      parts.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(selector.slice(start));
  return parts.map(p => p.trim());
}

function requirement(text: string): LabelMatcher | undefined {
  const equality = EQUALITY.exec(text);
  if (equality) {
    const [, key, op, value] = equality;
    if (!validKey(key)) return undefined;
    return op === '!='
      ? labels => labelOf(labels, key) !== value
      : labels => labelOf(labels, key) === value;
  }
  const set = SET.exec(text);
  if (set) {
    const [, key, op, list] = set;
    const values = list.split(',').map(v => v.trim());
    if (!validKey(key) || !values.every(v => VALUE_ONLY.test(v)))
      return undefined;
    const allowed = new Set(values);
    const isIn = (labels: Record<string, string> | undefined) => {
      const value = labelOf(labels, key);
      return value !== undefined && allowed.has(value);
    };
    return op === 'in' ? isIn : labels => !isIn(labels);
  }
  const exists = EXISTS.exec(text);
  if (exists) {
    const [, not, key] = exists;
    if (!validKey(key)) return undefined;
    return not
      ? labels => labelOf(labels, key) === undefined
      : labels => labelOf(labels, key) !== undefined;
  }
  return undefined;
}

/**
 * A matcher for a Kubernetes label selector string (`a=b,c!=d,e in (f,g),
 * !h`), as the API server applies `?labelSelector=`. Undefined for anything
 * it does not understand or the API server would refuse, so the caller can
 * leave the answer to the API server instead of guessing.
 */
export function parseLabelSelector(selector: string): LabelMatcher | undefined {
  if (selector.trim() === '') return () => true;
  const matchers: LabelMatcher[] = [];
  for (const text of requirements(selector)) {
    const matcher = requirement(text);
    if (!matcher) return undefined;
    matchers.push(matcher);
  }
  return labels => matchers.every(m => m(labels));
}

/** A selector of one `key=value` requirement, as `backstage.io/kubernetes-id` makes. */
const SINGLE_EQUALITY = /^\s*([^\s=!,()]+)\s*==?\s*([^\s=!,()]*)\s*$/;

/**
 * `key=value` for a selector that is exactly one equality requirement, the
 * shape an index by label can answer; undefined for any other selector.
 */
export function singleEqualityOf(selector: string): string | undefined {
  const m = SINGLE_EQUALITY.exec(selector);
  return m ? `${m[1]}=${m[2]}` : undefined;
}

/**
 * A label key that every object the selector matches carries (from a `=`,
 * `==`, `in` or exists requirement), so a matcher need only be tried on
 * objects with that label; undefined when there is none (a selector of
 * negations only, such as the catch-all `!x`, or one it cannot read).
 */
export function requiredKeyOf(selector: string): string | undefined {
  if (parseLabelSelector(selector) === undefined) return undefined;
  for (const text of requirements(selector)) {
    const equality = EQUALITY.exec(text);
    if (equality && equality[2] !== '!=') return equality[1];
    const set = SET.exec(text);
    if (set && set[2] === 'in') return set[1];
    const exists = EXISTS.exec(text);
    if (exists && !exists[1]) return exists[2];
  }
  return undefined;
}
