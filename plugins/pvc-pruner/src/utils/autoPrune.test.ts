import { describeClaimKeep, jobRequester } from './autoPrune';
import { formatTime } from './format';

describe('autoPrune wording', () => {
  it('names an automatic job by the annotation and the entity, a person’s by the person', () => {
    expect(jobRequester({ requestedBy: 'user:default/ann' })).toBe(
      'by user:default/ann',
    );
    expect(
      jobRequester({
        requestedBy: 'plugin:pvc-pruner',
        automaticRunId: 'run-1',
        onBehalfOf: 'component:default/shop',
      }),
    ).toBe(
      "automatic, per the entity's auto-prune annotation, on behalf of component:default/shop",
    );
  });

  it('says who kept a claim, when, until when and why; or that its annotation keeps it', () => {
    const keptAt = '2026-12-03T10:00:00.000Z';
    const until = '2027-01-31T23:59:59.000Z';
    expect(
      describeClaimKeep({
        source: 'card',
        keptBy: 'user:default/ann',
        keptAt,
        until,
        reason: 'holds the March export',
      }),
    ).toBe(
      `kept by user:default/ann on ${formatTime(keptAt)} until ${formatTime(
        until,
      )}: holds the March export`,
    );
    expect(describeClaimKeep({ source: 'annotation' })).toBe(
      'kept by its pvc-pruner.backstage.io/keep annotation',
    );
  });
});
