import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DataDirInUseError, lockDataDir } from '../../src/db/data-dir-lock';

/** The embedded database's data directory is one process's: PGlite takes no lock of its own. */
describe('lockDataDir', () => {
  let dataDir: string;
  const lockFile = () => path.join(dataDir, 'platform.lock');

  beforeEach(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'data-dir-lock-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses a directory another live process holds, naming it', async () => {
    const other = spawn('sleep', ['30']);
    try {
      writeFileSync(lockFile(), String(other.pid));
      expect(() => lockDataDir(dataDir)).toThrow(DataDirInUseError);
      expect(() => lockDataDir(dataDir)).toThrow(`is open in process ${other.pid}`);
      expect(readFileSync(lockFile(), 'utf8')).toBe(String(other.pid));
    } finally {
      other.kill();
    }
  });

  it('takes over a lock its holder left behind when it died, and releases it', () => {
    const gone = spawnSync('true').pid;
    writeFileSync(lockFile(), String(gone));
    const release = lockDataDir(dataDir);
    expect(readFileSync(lockFile(), 'utf8')).toBe(String(process.pid));
    release();
    expect(existsSync(lockFile())).toBe(false);
  });

  it('leaves a lock that is no longer its own when it releases', () => {
    const release = lockDataDir(dataDir);
    writeFileSync(lockFile(), '999999999');
    release();
    expect(readFileSync(lockFile(), 'utf8')).toBe('999999999');
  });
});
