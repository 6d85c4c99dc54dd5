/** One jest run for the whole workspace. TypeScript is stripped by SWC; `npm run typecheck` checks types. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/gateway', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/bench/'],
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs', ignoreDynamic: true } }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Also the default of every hook without its own: an afterAll that stops a whole platform (HTTP and gRPC drains,
  // Kafka consumers leaving their groups) once took over 30 s on a loaded 2-core CI run.
  testTimeout: 60000,
  // Integration tests start servers and databases; two workers suit the 2-core machines this runs on.
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
};
