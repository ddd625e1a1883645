import { screen } from '@testing-library/react';
import { EntityLinks } from './EntityLinks';
import { FakePvcPrunerApi } from '../../__testUtils__/FakePvcPrunerApi';
import { renderWithApis } from '../../__testUtils__/renderWithApis';

const refs = (n: number) =>
  Array.from({ length: n }, (_, i) => `component:default/c${i}`);

describe('EntityLinks', () => {
  it("links each entity to its Kubernetes tab, in a sentence's list", async () => {
    const { container } = await renderWithApis(
      <EntityLinks entityRefs={refs(3)} />,
      { api: new FakePvcPrunerApi() },
    );
    expect(container).toHaveTextContent(
      'component:default/c0, component:default/c1 and component:default/c2',
    );
    expect(
      screen.getByRole('link', { name: 'component:default/c2' }),
    ).toHaveAttribute('href', '/catalog/default/component/c2/kubernetes');
  });

  it('links at most `max` of them and counts the rest', async () => {
    const { container } = await renderWithApis(
      <EntityLinks entityRefs={refs(500)} max={2} />,
      { api: new FakePvcPrunerApi() },
    );
    expect(screen.getAllByRole('link')).toHaveLength(2);
    expect(container).toHaveTextContent(
      'component:default/c0, component:default/c1 and 498 more',
    );
  });
});
