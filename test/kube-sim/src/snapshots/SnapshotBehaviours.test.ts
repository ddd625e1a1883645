import { SnapshotBehaviours } from './SnapshotBehaviours';

const subject = {
  namespace: 'shop',
  snapshot: 'snap-1',
  claim: 'data-db-2',
  snapshotClass: 'csi',
};

describe('SnapshotBehaviours', () => {
  it('answers with the first matching rule and spends times', () => {
    const rules = new SnapshotBehaviours();
    rules.add({ namespace: 'search', error: 'elsewhere' });
    rules.add({ claim: 'data-db-2', error: 'once', times: 1 });
    rules.add({ snapshotClass: 'csi', readyAfterSeconds: 30 });
    expect(rules.take(subject)).toEqual({ error: 'once' });
    expect(rules.take(subject)).toEqual({ readyAfterSeconds: 30 });
    expect(rules.take({ ...subject, snapshotClass: 'other' })).toBeUndefined();
    expect(rules.take({ ...subject, namespace: 'search' })).toEqual({
      error: 'elsewhere',
    });
  });

  it('removes and clears rules', () => {
    const rules = new SnapshotBehaviours();
    const id = rules.add({ readyAfterSeconds: 5 });
    rules.add({ readyAfterSeconds: 6 });
    rules.remove(id);
    expect(rules.list()).toEqual([{ id: 2, readyAfterSeconds: 6 }]);
    rules.clear();
    expect(rules.take(subject)).toBeUndefined();
  });

  it.each([
    [
      { readyAfterSeconds: -1 },
      'readyAfterSeconds must be a non-negative number',
    ],
    [
      { readyAfterSeconds: 'soon' },
      'readyAfterSeconds must be a non-negative number',
    ],
    [{ error: 42 }, 'error must be a string'],
    [{ claim: ['a'] }, 'claim must be a string'],
    [{ times: 1.5 }, 'times must be a non-negative integer'],
  ])('refuses %j', (rule, message) => {
    expect(() => new SnapshotBehaviours().add(rule as any)).toThrow(message);
  });
});
