import type { GrpcServer, Logger, PlatformConfig, ReadinessCheck } from '@platform/runtime';

/** What every module of this process shares. */
export interface PlatformContext {
  config: PlatformConfig;
  logger: Logger;
  /** The targets this process runs, as given on the command line. */
  targets: string[];
  /** Checks behind /readyz; modules add theirs as they start. */
  readiness: ReadinessCheck[];
  /** Address of this process's own gRPC server once it listens (services hosted here are reached on it). */
  localGrpcAddress?: string;
  /** This process's gRPC server once it listens: clients of the services hosted here use its local channel. */
  localGrpcServer?: GrpcServer;
  /** How long draining may take before connections are cut. */
  shutdownGraceMs: number;
}
