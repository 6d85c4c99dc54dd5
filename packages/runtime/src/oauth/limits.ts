/**
 * Clients on the platform admins' trusted list, at most (docs/oauth.md): the edge refuses a longer list before
 * asking identity, and identity refuses one from any other caller. One constant, so the two always agree.
 */
export const MAX_TRUSTED_CLIENTS = 200;
