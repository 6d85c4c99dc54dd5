import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from '../logging/logger';

/** Routes kafkajs's own log lines (warn and error only) into our logger. */
export function kafkaLogCreator(logger: Logger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log as { message: string; [key: string]: unknown };
      // The broker answering "already exists" to our create-if-missing is expected; the bus handles it.
      if (message.startsWith('Response CreateTopics') && fields.error === 'Topic creation errors') {
        logger.debug({ kafka: namespace, ...fields }, message);
        return;
      }
      if (level === logLevel.ERROR) logger.error({ kafka: namespace, ...fields }, message);
      else if (level === logLevel.WARN) logger.warn({ kafka: namespace, ...fields }, message);
    };
}
