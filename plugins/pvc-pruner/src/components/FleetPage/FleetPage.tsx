import { Content, Header, Page } from '@backstage/core-components';
import { FleetView } from '../FleetView';

/** The fleet page of the legacy frontend system: Backstage's page frame around {@link FleetView}. */
export function FleetPage() {
  return (
    <Page themeId="tool">
      <Header
        title="Orphaned volumes"
        subtitle="What each team could reclaim from claims scaled-down StatefulSets left behind"
      />
      <Content>
        <FleetView />
      </Content>
    </Page>
  );
}
