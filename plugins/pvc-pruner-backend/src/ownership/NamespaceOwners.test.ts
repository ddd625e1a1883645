import { NotAllowedError } from '@backstage/errors';
import type { KubeGateway } from '../kubernetes';
import { componentEntity } from '../__testUtils__/catalogEntities';
import { namedOwners, NamespaceOwners } from './NamespaceOwners';
import { workloadEntityOf } from './WorkloadEntity';

function namespaceAnnotated(annotations: Record<string, string> = {}) {
  const readNamespace = jest.fn(async (name: string) => ({
    metadata: { name, annotations },
  }));
  return {
    gateway: { readNamespace } as unknown as KubeGateway,
    readNamespace,
  };
}

const ledger = workloadEntityOf(
  componentEntity('ledger', { owner: 'group:default/payments' }),
)!;
const borrowed = workloadEntityOf(
  componentEntity('borrowed', { owner: 'checkout' }),
)!;

describe('NamespaceOwners', () => {
  it('reads nothing when no annotation is configured', async () => {
    const { gateway, readNamespace } = namespaceAnnotated();
    await new NamespaceOwners().check(gateway, 'payments', [borrowed]);
    expect(readNamespace).not.toHaveBeenCalled();
  });

  it('lets a prune through when the namespace names every claimant’s owner, or the claimant', async () => {
    const { gateway } = namespaceAnnotated({
      'backstage.io/owner': 'payments, component:default/borrowed',
    });
    await expect(
      new NamespaceOwners('backstage.io/owner').check(gateway, 'payments', [
        ledger,
        borrowed,
      ]),
    ).resolves.toBeUndefined();
  });

  it('refuses a claimant whose owner the namespace does not name, saying what it names', async () => {
    const { gateway } = namespaceAnnotated({
      'backstage.io/owner': 'group:default/payments',
    });
    const check = new NamespaceOwners('backstage.io/owner').check(
      gateway,
      'payments',
      [ledger, borrowed],
    );
    await expect(check).rejects.toThrow(NotAllowedError);
    await expect(check).rejects.toThrow(
      /^Namespace payments names group:default\/payments in its backstage.io\/owner annotation, not component:default\/borrowed or its owner \(group:default\/checkout\)/,
    );
  });

  it('refuses every claimant when the namespace names no owner', async () => {
    const { gateway } = namespaceAnnotated({});
    await expect(
      new NamespaceOwners('backstage.io/owner').check(gateway, 'payments', [
        ledger,
      ]),
    ).rejects.toThrow(/names no owner/);
  });
});

describe('namedOwners', () => {
  it('reads entity refs separated by commas or spaces, ignoring what is not one, and caps them', () => {
    expect([...namedOwners('payments,  user:bob ,, :bad: team-x')]).toEqual([
      'group:default/payments',
      'user:default/bob',
      'group:default/team-x',
    ]);
    expect(namedOwners(Array(500).fill('a').join(',')).size).toBe(1);
    expect(
      namedOwners(Array.from({ length: 500 }, (_, i) => `g${i}`).join(','))
        .size,
    ).toBe(100);
  });
});
