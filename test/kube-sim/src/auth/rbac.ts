import { errors } from '../errors';
import type {
  AuthenticatedUser,
  PolicyRule,
  RbacBinding,
  TokenGrant,
} from './types';

export interface AccessRequest {
  verb: string;
  apiGroup: string;
  /** 'pods', or 'statefulsets/scale' for a subresource. */
  resource: string;
  namespace?: string;
  name?: string;
}

/** An authenticated request's user, plus the grant of the static token it used, if any. */
export interface RequestUser {
  info: AuthenticatedUser;
  grant?: TokenGrant;
}

export const ADMIN_RULES: PolicyRule[] = [
  { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
];

/** kube-apiserver binds this group to cluster-admin (system:masters is never subject to RBAC). */
export const MASTERS_GROUP = 'system:masters';

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

function scopeAllows(namespaces: string[] | undefined, req: AccessRequest) {
  return (
    !namespaces ||
    (req.namespace !== undefined && namespaces.includes(req.namespace))
  );
}

function bindsTo(binding: RbacBinding, user: AuthenticatedUser) {
  return binding.subjects.some(s =>
    s.kind === 'User' ? s.name === user.name : user.groups.includes(s.name),
  );
}

/** RBAC: a static token's own grant, plus every binding naming the user or one of its groups. */
export class RbacAuthorizer {
  private readonly bindings = new Set<RbacBinding>();

  addBinding(binding: RbacBinding): () => void {
    const own = { ...binding };
    this.bindings.add(own);
    return () => {
      this.bindings.delete(own);
    };
  }

  allows(user: RequestUser, req: AccessRequest): boolean {
    if (user.info.groups.includes(MASTERS_GROUP)) return true;
    const { grant } = user;
    if (
      grant &&
      scopeAllows(grant.namespaces, req) &&
      grant.rules.some(rule => ruleAllows(rule, req))
    ) {
      return true;
    }
    for (const binding of this.bindings) {
      if (
        bindsTo(binding, user.info) &&
        scopeAllows(binding.namespaces, req) &&
        binding.rules.some(rule => ruleAllows(rule, req))
      ) {
        return true;
      }
    }
    return false;
  }

  /** Throws kube-apiserver's 403 Status, naming user, verb, resource and namespace. */
  authorize(user: RequestUser, req: AccessRequest) {
    if (this.allows(user, req)) return;
    const [resource, subresource] = req.resource.split('/');
    throw errors.forbidden(
      user.info.name,
      req.verb,
      { group: req.apiGroup, kind: resource, name: req.name },
      req.namespace,
      subresource,
    );
  }
}
