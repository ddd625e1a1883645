/*
 * The demo backend: the pvc-pruner plugin with what a real Backstage gives it.
 *
 * - the catalog, loaded from dev/catalog-info.yaml (three teams, five services);
 * - Backstage's own Kubernetes backend, for the entity page's Kubernetes tab;
 * - the permission framework, with a demo policy: everyone may read (except
 *   the claims of the owners-only ledger), and only an entity's owners may
 *   prune claims;
 * - guest sign-in, as user:default/guest (a member of group checkout);
 * - Backstage notifications, with signals for live updates, so the guest
 *   sees the notices of automatic pruning in the portal.
 *
 * The first cluster comes from the PVC_PRUNER_DEMO_KUBE_* environment
 * variables (see app-config.yaml at the repository root); the second,
 * "warehouse", from the catalog, reached with an x509 client certificate
 * (dev/demoAuthStrategies.ts). `npm start` at the root sets
 * them: it starts the Kubernetes API simulator, this backend and the frontend
 * dev app together.
 */
import { resolve } from 'node:path';
import { createBackend } from '@backstage/backend-defaults';
import { createBackendModule } from '@backstage/backend-plugin-api';
import {
  catalogConditions,
  createCatalogConditionalDecision,
} from '@backstage/plugin-catalog-backend/alpha';
import {
  AuthorizeResult,
  isPermission,
  PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  PermissionPolicy,
  PolicyQuery,
  PolicyQueryUser,
} from '@backstage/plugin-permission-node';
import { policyExtensionPoint } from '@backstage/plugin-permission-node/alpha';
import {
  pvcPrunerOrphansReadPermission,
  pvcPrunerPrunePermission,
  pvcPrunerVolumesReclaimPermission,
} from 'backstage-plugin-pvc-pruner-common';
import {
  kubernetesClientCertificateModule,
  pvcPrunerClientCertificateModule,
} from './demoAuthStrategies';

const REQUIRED_ENV = ['PVC_PRUNER_DEMO_KUBE_URL', 'PVC_PRUNER_DEMO_KUBE_TOKEN'];
const missing = REQUIRED_ENV.filter(name => !process.env[name]);
if (missing.length > 0) {
  // eslint-disable-next-line no-console
  console.error(
    `The demo backend needs a cluster: ${missing.join(', ')} ${
      missing.length > 1 ? 'are' : 'is'
    } not set.\n` +
      'Run `npm start` at the repository root (it starts the Kubernetes API simulator and sets them),\n' +
      'or set PVC_PRUNER_DEMO_KUBE_URL, PVC_PRUNER_DEMO_KUBE_TOKEN and PVC_PRUNER_DEMO_KUBE_CA (base64 PEM) yourself.',
  );
  process.exit(1);
}

// One SQLite file per plugin, in the repository's git-ignored .demo/ folder
// unless the start script chose another, so job history survives restarts.
process.env.PVC_PRUNER_DEMO_DIR ??= resolve(__dirname, '../../../.demo');

/** Marks an entity whose claims only its owners may see (the demo's ledger). */
const OWNERS_ONLY_ANNOTATION = 'pvc-pruner.demo/claims-visible-to';

/**
 * Everyone may read everything, except the claims of entities marked
 * owners-only, which only their owners may read; only an entity's owners may
 * prune its claims or reclaim its Released volumes. Everything else is
 * allowed, pvc-pruner.fleet.unowned.read and pvc-pruner.unowned.prune
 * included, so the guest sees the fleet page's Unowned section, and reclaims
 * the Released volumes no entity can be traced to, as a platform team would.
 */
class DemoPermissionPolicy implements PermissionPolicy {
  async handle(
    request: PolicyQuery,
    user?: PolicyQueryUser,
  ): Promise<PolicyDecision> {
    if (isPermission(request.permission, pvcPrunerOrphansReadPermission)) {
      return createCatalogConditionalDecision(request.permission, {
        anyOf: [
          catalogConditions.isEntityOwner({
            claims: user?.info.ownershipEntityRefs ?? [],
          }),
          {
            not: catalogConditions.hasAnnotation({
              annotation: OWNERS_ONLY_ANNOTATION,
              value: 'owners',
            }),
          },
        ],
      });
    }
    if (
      isPermission(request.permission, pvcPrunerPrunePermission) ||
      isPermission(request.permission, pvcPrunerVolumesReclaimPermission)
    ) {
      if (!user) return { result: AuthorizeResult.DENY };
      return createCatalogConditionalDecision(
        request.permission,
        catalogConditions.isEntityOwner({
          claims: user.info.ownershipEntityRefs ?? [],
        }),
      );
    }
    return { result: AuthorizeResult.ALLOW };
  }
}

const demoPermissionPolicy = createBackendModule({
  pluginId: 'permission',
  moduleId: 'pvc-pruner-demo-policy',
  register(reg) {
    reg.registerInit({
      deps: { policy: policyExtensionPoint },
      async init({ policy }) {
        policy.setPolicy(new DemoPermissionPolicy());
      },
    });
  },
});

const backend = createBackend();

backend.add(import('@backstage/plugin-auth-backend'));
backend.add(import('@backstage/plugin-auth-backend-module-guest-provider'));
backend.add(import('@backstage/plugin-catalog-backend'));
backend.add(import('@backstage/plugin-permission-backend'));
backend.add(demoPermissionPolicy);
backend.add(import('@backstage/plugin-kubernetes-backend'));
// Owners are told of automatic prunes with Backstage notifications; signals
// push them to the open portal live.
backend.add(import('@backstage/plugin-notifications-backend'));
backend.add(import('@backstage/plugin-signals-backend'));
backend.add(kubernetesClientCertificateModule);
backend.add(import('../src'));
backend.add(pvcPrunerClientCertificateModule);

backend.start();
