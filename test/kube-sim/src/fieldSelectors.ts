import { errors } from './errors';
import { splitTerms } from './selectors';

type Getter = (o: any) => unknown;

const METADATA: Record<string, Getter> = {
  'metadata.name': o => o.metadata?.name,
  'metadata.namespace': o => o.metadata?.namespace,
};

/**
 * The field labels kube-apiserver supports per resource (each type's
 * GetAttrs / field label conversion); every resource has the metadata ones.
 */
const FIELDS: Record<string, Record<string, Getter>> = {
  events: {
    'involvedObject.kind': o => o.involvedObject?.kind,
    'involvedObject.namespace': o => o.involvedObject?.namespace,
    'involvedObject.name': o => o.involvedObject?.name,
    'involvedObject.uid': o => o.involvedObject?.uid,
    'involvedObject.apiVersion': o => o.involvedObject?.apiVersion,
    'involvedObject.resourceVersion': o => o.involvedObject?.resourceVersion,
    'involvedObject.fieldPath': o => o.involvedObject?.fieldPath,
    reason: o => o.reason,
    reportingComponent: o => o.reportingComponent,
    source: o => o.source?.component,
    type: o => o.type,
  },
  pods: {
    'spec.nodeName': o => o.spec?.nodeName,
    'spec.restartPolicy': o => o.spec?.restartPolicy,
    'spec.schedulerName': o => o.spec?.schedulerName,
    'spec.serviceAccountName': o => o.spec?.serviceAccountName,
    'status.phase': o => o.status?.phase,
    'status.podIP': o => o.status?.podIP,
  },
  namespaces: { 'status.phase': o => o.status?.phase },
};

/** fields.UnescapeValue: \\ \, and \= stand for themselves. */
function unescape(value: string, selector: string): string {
  return value.replace(/\\(.?)/g, (_, next: string) => {
    if (next === '\\' || next === ',' || next === '=') return next;
    throw errors.badRequest(
      `invalid field selector: '${selector}'; invalid escape sequence`,
    );
  });
}

/**
 * A fieldSelector (=, ==, !=; values escaped as kubectl escapes them) over
 * the field labels the resource supports; an unset field matches "".
 */
export function fieldMatcher(
  selector: string | undefined,
  resource = '',
): (obj: any) => boolean {
  if (!selector) return () => true;
  const supported = { ...METADATA, ...FIELDS[resource] };
  const checks = splitTerms(selector).map(term => {
    const m = term.match(/^([A-Za-z.]+)\s*(==|!=|=)\s*(.*)$/);
    if (!m)
      throw errors.badRequest(
        `invalid selector: '${selector}'; can't understand '${term}'`,
      );
    const getter = supported[m[1]];
    if (!getter) {
      throw errors.badRequest(
        `"${m[1]}" is not a known field selector: only ${Object.keys(supported)
          .map(f => `"${f}"`)
          .join(', ')}`,
      );
    }
    const wanted = unescape(m[3], selector);
    const negate = m[2] === '!=';
    return (o: any) => (String(getter(o) ?? '') === wanted) !== negate;
  });
  return obj => checks.every(c => c(obj));
}
