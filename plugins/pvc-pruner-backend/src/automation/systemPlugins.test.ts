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
