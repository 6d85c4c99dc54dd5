/** OAuth rules the edge and the identity service must apply alike (one definition, so they cannot drift apart). */
export * from './limits';
export * from './redirect-uri';
export * from './resource-url';
