import {
  createBackendPlugin,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import {
  notificationService,
  NotificationSendOptions,
} from '@backstage/plugin-notifications-node';

/**
 * A `notificationService` that records what is sent instead of posting it
 * to the notifications backend (backend-test-utils has no mock of it), and
 * a stand-in `notifications` plugin, so that the Backstage system lists the
 * notifications backend as installed (how pvc-pruner knows owners can be
 * told). Pass both to `startTestBackend`'s features; leave the plugin out to
 * test a system without notifications, or `fail` to make every send throw
 * as the real service does without the backend.
 */
export function recordingNotifications(options: { fail?: boolean } = {}) {
  const sent: NotificationSendOptions[] = [];
  const factory = createServiceFactory({
    service: notificationService,
    deps: {},
    factory: () => ({
      async send(notification: NotificationSendOptions) {
        if (options.fail)
          throw new Error(
            'Failed to send notifications: Error: Request failed with status 404',
          );
        sent.push(notification);
      },
    }),
  });
  const notificationsPlugin = createBackendPlugin({
    pluginId: 'notifications',
    register(env) {
      env.registerInit({ deps: {}, async init() {} });
    },
  });
  return {
    sent,
    factory,
    notificationsPlugin,
    /** The latest notice per scope, as the notifications backend keeps it (same scope updates). */
    latestByScope() {
      const latest = new Map<string, NotificationSendOptions>();
      for (const n of sent) latest.set(n.payload.scope ?? '', n);
      return latest;
    },
  };
}
