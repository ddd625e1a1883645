import { ConfigReader } from '@backstage/config';
import { readOptions } from './options';

const read = (pvcPruner: object) =>
  readOptions(new ConfigReader({ pvcPruner }));

describe('readOptions', () => {
  it('reads the namespace owner annotation, and nothing when it is unset', () => {
    expect(read({}).namespaceOwnerAnnotation).toBeUndefined();
    expect(
      read({ ownership: { namespaceOwnerAnnotation: 'backstage.io/owner' } })
        .namespaceOwnerAnnotation,
    ).toBe('backstage.io/owner');
    expect(
      read({ ownership: { namespaceOwnerAnnotation: 'owner' } })
        .namespaceOwnerAnnotation,
    ).toBe('owner');
  });

  it.each(['backstage.io/', '/owner', 'Backstage.IO/owner', 'a b', 'x/y/z'])(
    'refuses %j as a namespace owner annotation, saying what it wants',
    key => {
      expect(() =>
        read({ ownership: { namespaceOwnerAnnotation: key } }),
      ).toThrow(
        `pvcPruner: ownership.namespaceOwnerAnnotation must be a Kubernetes annotation key such as backstage.io/owner, got "${key}"`,
      );
    },
  );
});
