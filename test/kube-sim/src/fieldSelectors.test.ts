import { fieldMatcher } from './fieldSelectors';

const event = {
  metadata: { name: 'data-web-0.1', namespace: 'shop' },
  involvedObject: {
    kind: 'PersistentVolumeClaim',
    namespace: 'shop',
    name: 'data-web-0',
    uid: 'u-1',
  },
  reason: 'ProvisioningSucceeded',
  type: 'Normal',
  source: { component: 'persistentvolume-controller' },
};

describe('fieldMatcher', () => {
  it.each([
    // what kubectl describe sends
    [
      'involvedObject.name=data-web-0,involvedObject.namespace=shop,involvedObject.kind=PersistentVolumeClaim,involvedObject.uid=u-1',
      true,
    ],
    ['involvedObject.uid=u-2', false],
    ['involvedObject.name==data-web-0,type!=Warning', true],
    ['reason=ProvisioningSucceeded,source=persistentvolume-controller', true],
    ['type=Warning', false],
    // an unset field is ""
    ['involvedObject.fieldPath=', true],
    ['involvedObject.fieldPath!=', false],
    ['metadata.namespace=shop', true],
  ])('events: %s → %s', (selector, matches) => {
    expect(fieldMatcher(selector, 'events')(event)).toBe(matches);
  });

  it('unescapes values as kubectl escapes them', () => {
    const odd = { ...event, involvedObject: { name: 'a,b=c\\d' } };
    expect(
      fieldMatcher('involvedObject.name=a\\,b\\=c\\\\d', 'events')(odd),
    ).toBe(true);
  });

  it('selects pods by node and phase', () => {
    const pod = {
      metadata: { name: 'p' },
      spec: {},
      status: { phase: 'Pending' },
    };
    expect(fieldMatcher('spec.nodeName=', 'pods')(pod)).toBe(true);
    expect(fieldMatcher('status.phase=Running', 'pods')(pod)).toBe(false);
  });

  it.each([
    [
      'involvedObject.name=x',
      'persistentvolumeclaims',
      /"involvedObject.name" is not a known field selector: only "metadata.name", "metadata.namespace"$/,
    ],
    [
      'spec.nodeName=x',
      'events',
      /"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace", "involvedObject.kind"/,
    ],
    ['nonsense', 'events', /can't understand 'nonsense'/],
    ['reason=a\\b', 'events', /invalid escape sequence/],
  ])('rejects %s on %s', (selector, resource, message) => {
    expect(() => fieldMatcher(selector, resource)).toThrow(message);
  });
});
