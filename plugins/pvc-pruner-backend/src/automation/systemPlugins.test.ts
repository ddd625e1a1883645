import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import { startTestBackend } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { systemPlugins } from './systemPlugins';

const instance = (...ids: string[]) => ({
  getInstalledPlugins: async () =>
    ids.map(pluginId => ({ pluginId, modules: [] })),
});

describe('systemPlugins', () => {
  it('lists the plugins of this backend and those discovery routes to other backends', async () => {
    const plugins = systemPlugins(
      instance('pvc-pruner', 'catalog'),
      new ConfigReader({
        discovery: {
          endpoints: [
            {
              target: 'http://notify:7007/api/{{pluginId}}',
              plugins: ['notifications', 'signals'],
            },
          ],
        },
      }),
    );
    expect((await plugins.getInstalledPlugins()).map(p => p.pluginId)).toEqual([
      'pvc-pruner',
      'catalog',
      'notifications',
      'signals',
    ]);
  });

  it('lists only this backend without discovery endpoints', async () => {
    const plugins = systemPlugins(instance('pvc-pruner'), new ConfigReader({}));
    expect(await plugins.getInstalledPlugins()).toEqual([
      { pluginId: 'pvc-pruner' },
    ]);
  });
});

describe('systemPlugins in a backend', () => {
  async function pluginsSeen(withNotifications: boolean) {
    let seen: string[] = [];
    const probe = createBackendPlugin({
      pluginId: 'probe',
      register(env) {
        env.registerInit({
          deps: {
            instanceMetadata: coreServices.rootInstanceMetadata,
            config: coreServices.rootConfig,
          },
          async init({ instanceMetadata, config }) {
            seen = (
              await systemPlugins(
                instanceMetadata,
                config,
              ).getInstalledPlugins()
            ).map(p => p.pluginId);
          },
        });
      },
    });
    // A stand-in: what matters is that the backend has a plugin of that id.
    const notifications = createBackendPlugin({
      pluginId: 'notifications',
      register(env) {
        env.registerInit({ deps: {}, async init() {} });
      },
    });
    const backend = await startTestBackend({
      features: withNotifications ? [probe, notifications] : [probe],
    });
    await backend.stop();
    return seen;
  }

  it('sees the notifications backend installed beside pvc-pruner, and not when it is absent', async () => {
    expect(await pluginsSeen(true)).toContain('notifications');
    expect(await pluginsSeen(false)).not.toContain('notifications');
  });
});
