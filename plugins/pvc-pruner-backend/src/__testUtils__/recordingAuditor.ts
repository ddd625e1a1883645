import { AuditorServiceCreateEventOptions } from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';

/** One audit event, and how it ended (unset until the route reports it). */
export interface RecordedAuditEvent {
  options: AuditorServiceCreateEventOptions;
  outcome?: 'success' | 'fail';
  meta?: unknown;
  error?: Error;
}

/** An auditor (a mock service, with its factory) that records each event and how it ended. */
export function recordingAuditor() {
  const events: RecordedAuditEvent[] = [];
  const auditor = mockServices.auditor.mock({
    createEvent: async options => {
      const event: RecordedAuditEvent = { options };
      events.push(event);
      return {
        success: async o =>
          void Object.assign(event, { outcome: 'success', meta: o?.meta }),
        fail: async o =>
          void Object.assign(event, {
            outcome: 'fail',
            meta: o.meta,
            error: o.error,
          }),
      };
    },
  });
  return { auditor, events };
}
