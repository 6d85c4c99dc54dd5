import { ConfigError } from '@platform/runtime';

/** The variables that name a port this process listens on. */
export type PortVariable = 'PORT' | 'OPS_PORT' | 'GRPC_PORT';

/**
 * A listener's port already taken (another platform, or any program, on this machine) as a ConfigError naming the
 * variable to change, where the socket error alone ("EADDRINUSE … :::8081") leaves a newcomer to guess which of the
 * three ports it is and how to move it; any other failure as it is. grpc-js wraps the socket error in a message of
 * its own, so the code is looked for in the message too.
 */
export function portInUseAsConfigError(error: unknown, variable: PortVariable, port: number): unknown {
  // Read by shape, not `instanceof Error`: node's socket errors may come from another realm (jest's sandbox).
  const { code, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; message?: unknown };
  const inUse = code === 'EADDRINUSE' || (typeof message === 'string' && message.includes('EADDRINUSE'));
  if (!inUse) return error;
  // The socket's own words stay (which address, which host): they name nothing secret.
  const said = typeof message === 'string' ? ` (${message})` : '';
  return new ConfigError([`${variable}: port ${port} is already in use on this machine${said}; stop what holds it or set ${variable} to a free port`]);
}
