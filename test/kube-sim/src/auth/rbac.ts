import { randomBytes } from 'node:crypto';
import { errors } from './errors';

/** An RBAC PolicyRule, as in a Role or ClusterRole. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** What a bearer token may do: RBAC rules, limited to some namespaces when `namespaces` is set. */
export interface TokenGrant {
  user: string;
  rules: PolicyRule[];
  /** Namespaces the rules apply in (a RoleBinding); unset means cluster-wide (a ClusterRoleBinding). */
  namespaces?: string[];
}

export interface AccessRequest {
  verb: string;
  apiGroup: string;
  /** 'pods', or 'statefulsets/scale' for a subresource. */
  resource: string;
  namespace?: string;
  name?: string;
}

export const ADMIN_RULES: PolicyRule[] = [
  { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
];

const matches = (list: string[] | undefined, value: string) =>
  list === undefined || list.includes('*') || list.includes(value);

function ruleAllows(rule: PolicyRule, req: AccessRequest) {
  if (!matches(rule.apiGroups ?? [''], req.apiGroup)) return false;
  if (!matches(rule.verbs, req.verb)) return false;
  const [base] = req.resource.split('/');
  const resourceOk =
    matches(rule.resources, req.resource) ||
    (rule.resources ?? []).includes(`${base}/*`) ||
    (rule.resources ?? []).includes(`*/${req.resource.split('/')[1]}`);
  if (!resourceOk) return false;
  if (rule.resourceNames?.length)
    return req.name !== undefined && rule.resourceNames.includes(req.name);
  return true;
}

/** Bearer tokens and their RBAC-like grants. */
export class TokenAuthorizer {
  private readonly grants = new Map<string, TokenGrant>();

  /** Adds a token; returns it. A random token is made when none is given. */
  addToken(grant: TokenGrant, token = randomBytes(24).toString('hex')): string {
    this.grants.set(token, grant);
    return token;
  }

  removeToken(token: string) {
    this.grants.delete(token);
  }

  /** The grant for an Authorization header value; 401 when missing or unknown. */
  authenticate(header: string | undefined): TokenGrant {
    const m = header?.match(/^Bearer\s+(.+)$/i);
    const grant = m ? this.grants.get(m[1].trim()) : undefined;
    if (!grant) throw errors.unauthorized();
    return grant;
  }

  allows(grant: TokenGrant, req: AccessRequest): boolean {
    if (
      grant.namespaces &&
      (req.namespace === undefined || !grant.namespaces.includes(req.namespace))
    ) {
      return false;
    }
    return grant.rules.some(rule => ruleAllows(rule, req));
  }

  authorize(grant: TokenGrant, req: AccessRequest) {
    if (!this.allows(grant, req)) {
      const [resource, subresource] = req.resource.split('/');
      throw errors.forbidden(
        grant.user,
        req.verb,
        { group: req.apiGroup, kind: resource, name: req.name },
        req.namespace,
        subresource,
      );
    }
  }
}
