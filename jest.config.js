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
  // A worker keeps what each test file's module registry leaves on its heap (over 2 GB by the end of a full run), and
  // a process that large takes longer than jest's 500 ms to exit (freeing it), which jest reports as "failed to exit
  // gracefully". A worker past 1 GB after a file is replaced by a fresh one: a few restarts per run.
  workerIdleMemoryLimit: '1GB',
};
