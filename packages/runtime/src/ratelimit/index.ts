export { createRateLimiter, type RateLimiter, type RateLimitRule, type RateLimitDecision } from './rate-limiter';
export { rateLimitError } from './rate-limit-error';
