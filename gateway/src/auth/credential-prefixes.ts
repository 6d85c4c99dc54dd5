/**
 * How the edge tells its bearer credentials apart before asking identity: each answers only where it belongs, and
 * the wrong one is told where it does (an API key at `/mcp/{slug}`, an OAuth access token under `/v1`).
 */
export const API_KEY_PREFIX = 'rag_';
export const ACCESS_TOKEN_PREFIX = 'svcat_';
