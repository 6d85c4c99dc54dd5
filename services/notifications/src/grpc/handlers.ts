import { readServiceStatus, type AsyncServiceImplementation, type ServiceContext } from '@platform/runtime';
import type { NotificationsServiceServer } from '@platform/proto/gen/platform/notifications/v1/notifications';

/** gRPC handlers of the notifications service: they translate messages to domain calls and back, nothing more. */
export function createNotificationsServiceHandlers(context: ServiceContext): AsyncServiceImplementation<NotificationsServiceServer> {
  return {
    getServiceStatus: () => readServiceStatus('notifications', context.db),
  };
}
