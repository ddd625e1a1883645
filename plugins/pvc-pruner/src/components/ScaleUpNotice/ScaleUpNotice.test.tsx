import { render, screen } from '@testing-library/react';
import { KeptPvc } from 'backstage-plugin-pvc-pruner-common';
import { ScaleUpNotice, ScaleUpNoticeProps } from './ScaleUpNotice';

type Sts = ScaleUpNoticeProps['statefulSet'];

function renderNotice(kept: KeptPvc[], overrides: Partial<Sts> = {}) {
  return render(
    <ScaleUpNotice
      statefulSet={{
        name: 'db',
        namespace: 'shop',
        ordinals: { start: 0, end: 0 },
        retentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
        kept,
        ...overrides,
      }}
    />,
  );
}

const claims = (
  reason: KeptPvc['reason'],
  ordinals: number[],
  extra: Partial<KeptPvc> = {},
): KeptPvc[] =>
  ordinals.map(ordinal => ({
    name: `data-db-${ordinal}`,
    uid: `u${ordinal}`,
    template: 'data',
    ordinal,
    reason,
    ...extra,
  }));

describe('ScaleUpNotice', () => {
  it('says why a paused StatefulSet keeps its claims, and that deleting it keeps them under Retain', () => {
    renderNotice(claims('paused', [0, 1, 2, 3]));
    const notice = screen.getByRole('status');
    expect(notice).toHaveTextContent(
      'db is paused at 0 replicas: 4 claims kept',
    );
    expect(notice).toHaveTextContent(
      'Scaling it up again reattaches data-db-0 … data-db-3 (4 claims), data and all, so they are not offered for pruning.',
    );
    expect(notice).toHaveTextContent(
      'To retire db instead, delete the StatefulSet itself, then its claims with kubectl: its whenDeleted retention policy is Retain, so Kubernetes keeps them',
    );
    expect(notice).toHaveTextContent(
      'Setting whenDeleted: Delete now does not help: the StatefulSet controller marks only the claims of the pods it runs, and it runs none.',
    );
  });

  it('says which claims go with a paused StatefulSet whose whenDeleted is Delete', () => {
    renderNotice(claims('paused', [0]), {
      retentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Delete' },
    });
    const notice = screen.getByRole('status');
    expect(notice).toHaveTextContent('1 claim kept');
    expect(notice).toHaveTextContent(
      'reattaches data-db-0, data and all, so it is not offered',
    );
    expect(notice).toHaveTextContent(
      'To retire db instead, delete the StatefulSet itself: its whenDeleted retention policy is Delete, so Kubernetes deletes with it the claims the StatefulSet controller marked while their pods ran. Delete any claim that stays with kubectl.',
    );
  });

  it('names the autoscaler whose range keeps claims, and from which ordinal claims are offered', () => {
    renderNotice(
      claims('autoscaler-range', [3, 4, 7], {
        autoscaler: { name: 'db-hpa', maxReplicas: 6 },
      }),
      { ordinals: { start: 2, end: 3 } },
    );
    const notice = screen.getByRole('status');
    expect(notice).toHaveTextContent(
      '3 claims kept for HorizontalPodAutoscaler db-hpa',
    );
    expect(notice).toHaveTextContent(
      'It may scale db up to 6 replicas, and the StatefulSet controller would then reattach data-db-3, data-db-4, data-db-7, data and all. Claims of ordinals from 8 up are offered as orphans.',
    );
  });

  it('says so when the autoscaler has no maxReplicas that is a replica count', () => {
    renderNotice(
      claims('autoscaler-range', [1], { autoscaler: { name: 'broken' } }),
    );
    expect(screen.getByRole('status')).toHaveTextContent(
      'It targets db with a maxReplicas that is not a replica count, so it could scale it up to any ordinal: data-db-1 is kept.',
    );
  });

  it("warns when the namespace's autoscalers could not be read, saying why and what to ask for", () => {
    renderNotice(
      claims('autoscalers-unreadable', [1, 2], {
        autoscalersError: 'cluster "demo" refused list: 403 Forbidden',
      }),
    );
    const notice = screen.getByRole('status');
    expect(notice).toHaveTextContent(
      '2 claims kept: the autoscalers of shop could not be read',
    );
    expect(notice).toHaveTextContent(
      '(cluster "demo" refused list: 403 Forbidden)',
    );
    expect(notice).toHaveTextContent(
      'list and watch on horizontalpodautoscalers',
    );
    expect(notice).toHaveTextContent('Ask your platform team to grant it.');
  });

  it('shows nothing for claims kept for other reasons', () => {
    const { container } = renderNotice([
      ...claims('mounted-by-pod', [3], { pods: [] }),
      ...claims('terminating', [4], { finalizers: [] }),
    ]);
    expect(container).toBeEmptyDOMElement();
  });
});
