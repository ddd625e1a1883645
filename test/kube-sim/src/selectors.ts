import { errors } from './errors';

type Labels = Record<string, string> | undefined;

export type Requirement =
  | { key: string; op: 'exists' | 'notexists' }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type Matcher = (labels: Labels) => boolean;

const matchAll: Matcher = () => true;

function matchRequirement(r: Requirement, labels: Labels): boolean {
  const has =
    labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = has ? labels![r.key] : undefined;
  switch (r.op) {
    case 'exists':
      return has;
    case 'notexists':
      return !has;
    case 'in':
      return has && r.values.includes(value!);
    case 'notin':
      return !has || !r.values.includes(value!);
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(value!)) return false;
      const n = Number(value);
      return r.op === 'gt' ? n > r.value : n < r.value;
    }
    default:
      return false;
  }
}

/** Splits on commas that are neither inside parentheses nor escaped with a backslash (field selectors escape). */
export function splitTerms(selector: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < selector.length; i++) {
    const ch = selector[i];
    if (ch === '\\' && i + 1 < selector.length) {
      current += ch + selector[++i];
      continue;
    }
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  terms.push(current);
  return terms.map(t => t.trim()).filter(t => t.length > 0);
}

const KEY = String.raw`[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?`;
const VALUE = String.raw`([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?`;

function parseTerm(term: string): Requirement {
  let m = term.match(new RegExp(`^!\\s*(${KEY})$`));
  if (m) return { key: m[1], op: 'notexists' };
  m = term.match(new RegExp(`^(${KEY})\\s+(in|notin)\\s*\\(([^)]*)\\)$`));
  if (m) {
    const values = m[4].split(',').map(v => v.trim());
    if (values.some(v => !new RegExp(`^${VALUE}$`).test(v))) {
      throw errors.badRequest(
        `unable to parse requirement: invalid label value in "${term}"`,
      );
    }
    return { key: m[1], op: m[3] as 'in' | 'notin', values };
  }
  m = term.match(new RegExp(`^(${KEY})\\s*(==|!=|=)\\s*(${VALUE})$`));
  if (m) {
    return { key: m[1], op: m[3] === '!=' ? 'notin' : 'in', values: [m[4]] };
  }
  m = term.match(new RegExp(`^(${KEY})\\s*(>|<)\\s*(-?\\d+)$`));
  if (m)
    return { key: m[1], op: m[3] === '>' ? 'gt' : 'lt', value: Number(m[4]) };
  m = term.match(new RegExp(`^(${KEY})$`));
  if (m) return { key: m[1], op: 'exists' };
  throw errors.badRequest(
    `unable to parse requirement: found '${term}', expected a valid label selector`,
  );
}

export function parseLabelSelector(
  selector: string | undefined,
): Requirement[] {
  if (!selector) return [];
  return splitTerms(selector).map(parseTerm);
}

export function labelMatcher(selector: string | undefined): Matcher {
  const requirements = parseLabelSelector(selector);
  if (requirements.length === 0) return matchAll;
  return labels => requirements.every(r => matchRequirement(r, labels));
}

/** Equality requirements of a selector, which can be answered from a label index. */
export function equalityTerms(
  requirements: Requirement[],
): Array<[string, string]> {
  return requirements.flatMap(r =>
    r.op === 'in' && r.values.length === 1
      ? [[r.key, r.values[0]] as [string, string]]
      : [],
  );
}

/** metav1.LabelSelector (matchLabels + matchExpressions) as a matcher. */
export function labelSelectorMatcher(selector: {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{
    key: string;
    operator: string;
    values?: string[];
  }>;
}): Matcher {
  const requirements: Requirement[] = [
    ...Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({
      key,
      op: 'in' as const,
      values: [value],
    })),
    ...(selector.matchExpressions ?? []).map(e => {
      switch (e.operator) {
        case 'In':
          return { key: e.key, op: 'in' as const, values: e.values ?? [] };
        case 'NotIn':
          return { key: e.key, op: 'notin' as const, values: e.values ?? [] };
        case 'Exists':
          return { key: e.key, op: 'exists' as const };
        case 'DoesNotExist':
          return { key: e.key, op: 'notexists' as const };
        default:
          throw errors.badRequest(
            `"${e.operator}" is not a valid label selector operator`,
          );
      }
    }),
  ];
  return labels => requirements.every(r => matchRequirement(r, labels));
}

/** The metadata.name a field selector pins, if any (lets a list skip a scan). */
export function fieldSelectedName(
  selector: string | undefined,
): string | undefined {
  const m = selector?.match(/^metadata\.name==?([^,]+)$/);
  return m?.[1];
}
