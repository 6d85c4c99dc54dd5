import { credentials, makeGenericClientConstructor, type Server, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import { HealthImplementation, service as healthService } from 'grpc-health-check';

/** The overall server, as opposed to one named service, in grpc.health.v1. */
export const OVERALL_HEALTH = '';

/** grpc.health.v1 (Check, Watch, List) statuses for one server. */
export class HealthRegistry {
  private readonly implementation = new HealthImplementation();
  private readonly known = new Set<string>();

  addTo(server: Server): void {
    // grpc-health-check types its Server parameter against its own copy of proto-loader; it is grpc-js's Server.
    this.implementation.addToServer(server as unknown as Parameters<HealthImplementation['addToServer']>[0]);
  }

  setServing(serviceName: string, serving: boolean): void {
    this.known.add(serviceName);
    this.implementation.setStatus(serviceName, serving ? 'SERVING' : 'NOT_SERVING');
  }

  /** Marks every service reported so far, and the overall server, SERVING or NOT_SERVING. */
  setAll(serving: boolean): void {
    for (const name of new Set([...this.known, OVERALL_HEALTH])) this.setServing(name, serving);
  }
}

const HealthClient = makeGenericClientConstructor(healthService as unknown as ServiceDefinition, 'grpc.health.v1.Health');

/**
 * True when the server at `address` answers grpc.health.v1 Check with SERVING for `serviceName` (the overall
 * server by default). Unknown services, NOT_SERVING, unreachable servers and timeouts all give false.
 */
export function checkHealth(address: string, serviceName = OVERALL_HEALTH, deadlineMs = 1000): Promise<boolean> {
  const client = new HealthClient(address, credentials.createInsecure());
  return new Promise<boolean>((resolve) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      (request: { service: string }) => healthService.Check!.requestSerialize(request),
      (bytes: Buffer) => healthService.Check!.responseDeserialize(bytes) as { status?: string },
      { service: serviceName },
      { deadline: Date.now() + deadlineMs },
      (error: ServiceError | null, response?: { status?: string }) => resolve(!error && response?.status === 'SERVING'),
    );
  }).finally(() => client.close());
}
