import type { PolicyRule, RbacBinding } from '../src';
import type { SimHarness } from './helpers';

/** Fixtures the authentication conformance tests share. */
export const PVCS = '/api/v1/namespaces/default/persistentvolumeclaims';

/** An RBAC rule for PersistentVolumeClaims. */
export const pvcRule = (...verbs: string[]): PolicyRule => ({
  apiGroups: [''],
  resources: ['persistentvolumeclaims'],
  verbs,
});

/** A binding of a PVC rule to one group (in some namespaces, or cluster-wide). */
export const groupBinding = (
  group: string,
  verbs: string[],
  namespaces?: string[],
): RbacBinding => ({
  subjects: [{ kind: 'Group', name: group }],
  rules: [pvcRule(...verbs)],
  ...(namespaces ? { namespaces } : {}),
});

export const AWS_CLUSTER = 'shop-eks';
export const AWS_ACCOUNT = '111122223333';
/** AWS's documentation example keys: static credentials of IAM user `backstage`. */
export const AWS_USER_KEY = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
export const AWS_USER_ARN = `arn:aws:iam::${AWS_ACCOUNT}:user/backstage`;

/**
 * Asserts that a token is refused with kube-apiserver's 401 Status, and that the request log says
 * why without quoting the token; returns the logged reason.
 */
export async function refusalReason(h: SimHarness, token: string) {
  const res = await h.http('GET', PVCS, { token });
  expect(res.status).toBe(401);
  expect(res.json()).toMatchObject({ code: 401, reason: 'Unauthorized' });
  const logged = h.sim.requests().at(-1)?.authError ?? '';
  expect(logged).not.toBe('');
  expect(logged).not.toContain(token);
  return logged;
}
