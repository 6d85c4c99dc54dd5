import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { isCI } from './infra';

/** Debian's chromium package (installed by deploy/provision.sh); playwright-core downloads no browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Whether browser tests can run. Under CI the browser is required (provision.sh installs it), so its absence
 * throws; locally it returns false and the caller skips with a note.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (isCI()) throw new Error(`${CHROMIUM_PATH} is missing under CI: deploy/provision.sh installs Debian's chromium`);
  return false;
}

export interface ChromiumSession {
  context: BrowserContext;
  /** The profile directory (fresh and empty at launch), also a scratch place for screenshots. */
  dir: string;
  close(): Promise<void>;
}

/** Headless Debian Chromium driven by playwright-core, with a new empty profile that `close()` removes. */
export async function launchChromium(): Promise<ChromiumSession> {
  const { chromium } = await import('playwright-core');
  const dir = mkdtempSync(path.join(tmpdir(), 'chromium-'));
  const profile = path.join(dir, 'profile');
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1000, height: 800 },
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    context,
    dir,
    async close() {
      await context.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
