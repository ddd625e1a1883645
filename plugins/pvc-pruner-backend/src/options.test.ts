import { ConfigReader } from '@backstage/config';
import { readOptions } from './options';

const options = (pvcPruner: object) =>
  readOptions(new ConfigReader({ pvcPruner }));

describe('readOptions', () => {
  it('has the documented defaults', () => {
    expect(options({})).toMatchObject({
      retentionDays: 90,
      runningJobsPerUser: 10,
      eventStreamsPerUser: 20,
      allowPruneWithoutPermissionFramework: false,
      removedRequirePermissionFramework: undefined,
    });
  });

  it.each([
    [
      { retentionDays: 0.5 },
      'pvcPruner: retentionDays must be at least 1, got 0.5',
    ],
    [
      { retentionDays: 0 },
      'pvcPruner: retentionDays must be a positive number, got 0',
    ],
    [
      { limits: { runningJobsPerUser: 2.5 } },
      'pvcPruner: limits.runningJobsPerUser must be a whole number, got 2.5',
    ],
    [
      { limits: { eventStreamsPerUser: -1 } },
      'pvcPruner: limits.eventStreamsPerUser must be a positive number, got -1',
    ],
  ])('refuses %j', (pvcPruner, message) => {
    expect(() => options(pvcPruner)).toThrow(message);
  });
});
