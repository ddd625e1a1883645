import { ConfigReader } from '@backstage/config';
import type { JsonObject } from '@backstage/types';
import { readOptions } from './options';

const options = (pvcPruner: JsonObject) =>
  readOptions(new ConfigReader({ pvcPruner }));

describe('readOptions', () => {
  it('keeps the claims of paused StatefulSets unless told to offer them', () => {
    expect(options({}).pausedStatefulSets).toBe('keep');
    expect(options({ pausedStatefulSets: 'keep' }).pausedStatefulSets).toBe(
      'keep',
    );
    expect(options({ pausedStatefulSets: 'offer' }).pausedStatefulSets).toBe(
      'offer',
    );
  });

  it('refuses any other value of pausedStatefulSets, naming both it allows', () => {
    expect(() => options({ pausedStatefulSets: 'delete' })).toThrow(
      "pvcPruner: pausedStatefulSets must be 'keep' (keep the claims of a StatefulSet scaled to 0, the default) or 'offer' (offer them as orphans), got 'delete'",
    );
    expect(() => options({ pausedStatefulSets: true })).toThrow(
      /pausedStatefulSets/,
    );
  });
});
