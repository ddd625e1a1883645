import type {
  RootInstanceMetadataService,
  RootSystemMetadataService,
} from '@backstage/backend-plugin-api';
import type { Config } from '@backstage/config';

/**
 * The plugins of this Backstage system, as `coreServices.rootSystemMetadata`
 * lists them: those installed in this backend, and those
 * `discovery.endpoints` routes to other backends. Built on
 * `rootInstanceMetadata`, which every backend (and `startTestBackend`)
 * provides, where `rootSystemMetadata` is only in `createBackend` of recent
 * `@backstage/backend-defaults`: depending on it would stop the plugin from
 * starting elsewhere.
 */
export function systemPlugins(
  instance: Pick<RootInstanceMetadataService, 'getInstalledPlugins'>,
  config: Config,
): Pick<RootSystemMetadataService, 'getInstalledPlugins'> {
  return {
    async getInstalledPlugins() {
      const routed = (
        config.getOptionalConfigArray('discovery.endpoints') ?? []
      ).flatMap(e => e.getOptionalStringArray('plugins') ?? []);
      const local = (await instance.getInstalledPlugins()).map(p => p.pluginId);
      return [...new Set([...local, ...routed])].map(pluginId => ({
        pluginId,
      }));
    },
  };
}
