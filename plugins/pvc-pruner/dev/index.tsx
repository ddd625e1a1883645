// The new JSX transform (no React import, as the lint rules ask), also for tsc
// while the root tsconfig still has "jsx": "react":
/** @jsxRuntime automatic */
/** @jsxImportSource react */
/*
 * The demo portal: one page per demo service, laid out like a service's
 * Kubernetes tab in a Backstage app. Sign-in is the guest provider of the
 * demo backend (plugins/pvc-pruner-backend/dev), which signs you in as
 * user:default/guest, a member of group checkout. Its sidebar has Backstage's
 * notifications, updated live through signals: the notices of automatic
 * pruning reach the guest there.
 *
 * Start everything with `npm start` at the repository root.
 */
import { PropsWithChildren } from 'react';
import { CatalogClient } from '@backstage/catalog-client';
import { stringifyEntityRef } from '@backstage/catalog-model';
import {
  Content,
  Header,
  HeaderLabel,
  HeaderTabs,
  Page,
  Progress,
  ResponseErrorPanel,
  WarningPanel,
} from '@backstage/core-components';
import {
  createApiFactory,
  createPlugin,
  createRoutableExtension,
  discoveryApiRef,
  fetchApiRef,
  googleAuthApiRef,
  microsoftAuthApiRef,
  useApi,
} from '@backstage/core-plugin-api';
import {
  KubernetesAuthProviders,
  KubernetesAuthProvidersApi,
  kubernetesAuthProvidersApiRef,
  ServerSideKubernetesAuthProvider,
} from '@backstage/plugin-kubernetes-react';
import type { KubernetesRequestBody } from '@backstage/plugin-kubernetes-common';
import { createDevApp } from '@backstage/dev-utils';
import {
  AsyncEntityProvider,
  catalogApiRef,
  entityRouteRef,
  useEntity,
} from '@backstage/plugin-catalog-react';
import {
  EntityKubernetesContent,
  kubernetesPlugin,
} from '@backstage/plugin-kubernetes';
import {
  NotificationsPage,
  NotificationsSidebarItem,
  notificationsPlugin,
} from '@backstage/plugin-notifications';
import { signalsPlugin } from '@backstage/plugin-signals';
import Grid from '@material-ui/core/Grid';
import StorageIcon from '@material-ui/icons/Storage';
import AccountTreeIcon from '@material-ui/icons/AccountTree';
import { Navigate, useParams } from 'react-router-dom';
import useAsyncRetry from 'react-use/esm/useAsyncRetry';
import {
  EntityPvcPrunerCard,
  PvcPrunerFleetPage,
  pvcPrunerPlugin,
} from '../src/plugin';

/**
 * Loads an entity from the demo backend's catalog and provides it to the page
 * (useEntity, and useAsyncEntity's refresh), as the catalog's entity page does.
 */
const EntityLoader = ({
  entityRef,
  children,
}: PropsWithChildren<{ entityRef: string }>) => {
  const catalogApi = useApi(catalogApiRef);
  const {
    value: entity,
    loading,
    error,
    retry,
  } = useAsyncRetry(
    () => catalogApi.getEntityByRef(entityRef),
    [catalogApi, entityRef],
  );
  if (loading && !entity) return <Progress />;
  if (error) return <ResponseErrorPanel error={error} />;
  if (!entity) {
    return (
      <WarningPanel title={`${entityRef} is not in the catalog`}>
        The demo backend loads plugins/pvc-pruner-backend/dev/catalog-info.yaml
        shortly after it starts; reload the page in a moment.
      </WarningPanel>
    );
  }
  return (
    <AsyncEntityProvider
      entity={entity}
      loading={loading}
      error={error}
      refresh={retry}
    >
      {children}
    </AsyncEntityProvider>
  );
};

const EntityHeader = () => {
  const { entity } = useEntity();
  return (
    <Header
      title={entity.metadata.title ?? entity.metadata.name}
      subtitle={entity.metadata.description}
      type={String(entity.spec?.type ?? entity.kind)}
    >
      <HeaderLabel label="Owner" value={String(entity.spec?.owner ?? '—')} />
      <HeaderLabel
        label="Lifecycle"
        value={String(entity.spec?.lifecycle ?? '—')}
      />
    </Header>
  );
};

/**
 * A service's Kubernetes tab: the pvc-pruner card above Backstage's own
 * Kubernetes content. `children` is the Kubernetes content, so that it appears
 * literally in the element tree given to addPage (routable extensions are
 * discovered there).
 */
const DemoEntityKubernetesPage = ({
  entityRef,
  children,
}: PropsWithChildren<{ entityRef: string }>) => (
  <Page themeId="service">
    <EntityLoader entityRef={entityRef}>
      <EntityHeader />
      <HeaderTabs
        selectedIndex={0}
        tabs={[{ id: 'kubernetes', label: 'Kubernetes' }]}
      />
      <Content>
        {/* As the README tells an app to place it: a full-width item of a row grid. */}
        <Grid container spacing={3}>
          <Grid item xs={12} data-testid="pvc-pruner-card-slot">
            <EntityPvcPrunerCard />
          </Grid>
          <Grid item xs={12}>
            {children}
          </Grid>
        </Grid>
      </Content>
    </EntityLoader>
  </Page>
);

/** The Kubernetes tab of the entity the URL names: any entity of the catalog, e.g. one you register. */
const DemoEntityFromUrl = ({ children }: PropsWithChildren<{}>) => {
  const { kind = '', namespace, name = '' } = useParams();
  return (
    <DemoEntityKubernetesPage
      entityRef={stringifyEntityRef({ kind, namespace, name })}
    >
      {children}
    </DemoEntityKubernetesPage>
  );
};

/** The demo services (plugins/pvc-pruner-backend/dev/catalog-info.yaml). */
// orders: orphans to prune, owned by the guest's team; cart: nothing to prune;
// search-index: orphans on Retain volumes, owned by another team;
// recommendations: opted into automatic pruning, owned by the guest's team.
const DEMO_ENTITIES = ['orders', 'cart', 'search-index', 'recommendations'];

/**
 * Backstage's own auth providers, plus the demo's custom `x509` provider as
 * a server-side one (the backend holds the certificate), as an app with a
 * custom Kubernetes auth strategy registers it.
 */
class DemoKubernetesAuthProviders implements KubernetesAuthProvidersApi {
  private readonly serverSide = new ServerSideKubernetesAuthProvider();
  constructor(private readonly builtIn: KubernetesAuthProviders) {}

  decorateRequestBodyForAuth(
    authProvider: string,
    requestBody: KubernetesRequestBody,
  ) {
    return authProvider === 'x509'
      ? this.serverSide.decorateRequestBodyForAuth(requestBody)
      : this.builtIn.decorateRequestBodyForAuth(authProvider, requestBody);
  }

  getCredentials(authProvider: string) {
    return authProvider === 'x509'
      ? this.serverSide.getCredentials()
      : this.builtIn.getCredentials(authProvider);
  }
}

/**
 * The catalog's entity route, as the catalog plugin mounts it in an app, so
 * the fleet page can link to each entity's Kubernetes tab. An entity's page
 * here is its Kubernetes tab.
 */
const demoCatalogPlugin = createPlugin({
  id: 'demo-catalog',
  routes: { entity: entityRouteRef },
});
const DemoEntityRoute = demoCatalogPlugin.provide(
  createRoutableExtension({
    name: 'DemoEntityRoute',
    mountPoint: entityRouteRef,
    component: async () => () => <Navigate to="kubernetes" replace />,
  }),
);

const app = createDevApp()
  .registerPlugin(
    kubernetesPlugin,
    pvcPrunerPlugin,
    demoCatalogPlugin,
    notificationsPlugin,
    signalsPlugin,
  )
  .registerApi(
    createApiFactory({
      api: catalogApiRef,
      deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
      factory: ({ discoveryApi, fetchApi }) =>
        new CatalogClient({ discoveryApi, fetchApi }),
    }),
  )
  .registerApi(
    createApiFactory({
      api: kubernetesAuthProvidersApiRef,
      deps: {
        googleAuthApi: googleAuthApiRef,
        microsoftAuthApi: microsoftAuthApiRef,
      },
      factory: ({ googleAuthApi, microsoftAuthApi }) =>
        new DemoKubernetesAuthProviders(
          new KubernetesAuthProviders({ googleAuthApi, microsoftAuthApi }),
        ),
    }),
  );

for (const name of DEMO_ENTITIES) {
  const entityRef = stringifyEntityRef({
    kind: 'Component',
    namespace: 'default',
    name,
  });
  app.addPage({
    path: `/catalog/default/component/${name}/kubernetes`,
    title: name,
    icon: StorageIcon,
    element: (
      <DemoEntityKubernetesPage entityRef={entityRef}>
        <EntityKubernetesContent refreshIntervalMs={5000} />
      </DemoEntityKubernetesPage>
    ),
  });
}

// The fleet page, with its sidebar item as the README shows an app adding it.
app.addPage({
  path: '/pvc-pruner',
  title: 'Orphaned volumes',
  icon: AccountTreeIcon,
  element: <PvcPrunerFleetPage />,
});
// Backstage's notifications, as an app adds them: the page, and the sidebar
// item that counts unread notices and shows a new one as it arrives (signals).
app.addPage({ path: '/notifications', element: <NotificationsPage /> });
app.addSidebarItem(<NotificationsSidebarItem />);
app.addPage({
  path: '/catalog/:namespace/:kind/:name',
  element: <DemoEntityRoute />,
});
// Every other entity, such as one you register: where the fleet page and the card link it.
app.addPage({
  path: '/catalog/:namespace/:kind/:name/kubernetes',
  element: (
    <DemoEntityFromUrl>
      <EntityKubernetesContent refreshIntervalMs={5000} />
    </DemoEntityFromUrl>
  ),
});

app.render();
