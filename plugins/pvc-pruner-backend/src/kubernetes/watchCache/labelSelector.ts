/** Whether an object's labels satisfy a selector. */
export type LabelMatcher = (
  labels: Record<string, string> | undefined,
) => boolean;

const KEY = String.raw`[A-Za-z0-9][-A-Za-z0-9_./]*`;
const VALUE = String.raw`(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;
const EQUALITY = new RegExp(`^(${KEY})\\s*(==|=|!=)\\s*(${VALUE})$`);
const SET = new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^()]*)\\)$`);
const EXISTS = new RegExp(`^(!?)\\s*(${KEY})$`);

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
    return op === '!='
      ? labels => labels?.[key] !== value
      : labels => labels?.[key] === value;
  }
  const set = SET.exec(text);
  if (set) {
    const [, key, op, list] = set;
    const values = new Set(list.split(',').map(v => v.trim()));
    return op === 'in'
      ? labels => labels?.[key] !== undefined && values.has(labels[key])
      : labels => labels?.[key] === undefined || !values.has(labels[key]);
  }
  const exists = EXISTS.exec(text);
  if (exists) {
    const [, not, key] = exists;
    return not
      ? labels => labels?.[key] === undefined
      : labels => labels?.[key] !== undefined;
  }
  return undefined;
}

/**
 * A matcher for a Kubernetes label selector string (`a=b,c!=d,e in (f,g),
 * !h`), as the API server applies `?labelSelector=`. Undefined for anything
 * it does not understand, so the caller can leave the answer to the API
 * server instead of guessing.
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
