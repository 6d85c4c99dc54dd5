import path from 'node:path';
import { defineService } from '@platform/runtime';
import { NotificationsServiceService } from '@platform/proto/gen/platform/notifications/v1/notifications';
import { createNotificationsServiceHandlers } from './grpc/handlers';

/** Notification destinations (webhooks) and in-app notifications. */
export const notificationsService = defineService({
  name: 'notifications',
  grpc: { definition: NotificationsServiceService, fullName: 'platform.notifications.v1.NotificationsService' },
  migrationsDir: path.join(__dirname, 'store', 'migrations'),
  create: (context) => ({ handlers: createNotificationsServiceHandlers(context) }),
});
