import {
  PERMISSION_FRAMEWORK_OFF_REFUSAL,
  permissionFrameworkGate,
} from './permissionFrameworkGate';

const gate = (permissionsEnabled: boolean, allow = false, removed?: boolean) =>
  permissionFrameworkGate({
    permissionsEnabled,
    pvcPruner: {
      allowPruneWithoutPermissionFramework: allow,
      removedRequirePermissionFramework: removed,
    },
  });

describe('permissionFrameworkGate', () => {
  it('lets the policy decide while the framework is on, with or without the opt-out, and says nothing', () => {
    expect(gate(true)).toEqual({ warnings: [] });
    expect(gate(true, true)).toEqual({ warnings: [] });
  });

  it('refuses prunes while the framework is off, unless allowPruneWithoutPermissionFramework opts out', () => {
    expect(gate(false)).toEqual({
      pruneDisabledReason: PERMISSION_FRAMEWORK_OFF_REFUSAL,
      warnings: [expect.stringContaining('every prune and dry run is refused')],
    });
    expect(gate(false, true)).toEqual({
      warnings: [
        expect.stringContaining('every signed-in user may prune every claim'),
      ],
    });
  });

  it('fails the start where the removed requirePermissionFramework would now mean something else (false, framework off)', () => {
    expect(() => gate(false, false, false)).toThrow(
      /requirePermissionFramework was removed.*This config sets it to false with the framework off, which let every signed-in user prune\. To keep that, replace it with pvcPruner\.allowPruneWithoutPermissionFramework: true\. To refuse pruning instead, remove it/,
    );
  });

  it.each([
    [false, false, true],
    [false, true, false],
    [false, true, true],
    [true, false, false],
    [true, false, true],
  ])(
    'warns that requirePermissionFramework is no longer read wherever its meaning is kept (framework on %s, opt-out %s, old value %s)',
    (enabled, allow, removed) => {
      const { pruneDisabledReason, warnings } = gate(enabled, allow, removed);
      expect(warnings[0]).toMatch(
        /^pvc-pruner: pvcPruner\.requirePermissionFramework was removed: .* It is no longer read; remove it from your config\.$/,
      );
      expect(pruneDisabledReason).toBe(
        !enabled && !allow ? PERMISSION_FRAMEWORK_OFF_REFUSAL : undefined,
      );
    },
  );
});
