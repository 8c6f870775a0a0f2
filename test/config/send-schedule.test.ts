import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { agentConfigSchema } from '../../src/config/schema.js';
import { thrownDocex } from '../api/support/caught.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-config-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A sandbox configuration with one folder whose extra YAML lines are `folderLines`. */
function load(folderLines: string) {
  const file = path.join(dir, 'agent.yaml');
  writeFileSync(
    file,
    `sandbox: { enabled: true }
folders:
  - name: letters
    source: { type: local, path: in/letters }
    workflowId: wf_payload_word
${folderLines}`,
  );
  return () => loadConfig(file, { env: {} });
}

const folder = (extra: Record<string, unknown>) =>
  agentConfigSchema.safeParse({
    sandbox: { enabled: true },
    folders: [{ name: 'f', source: { type: 'local', path: 'in/f' }, workflowId: 'wf', ...extra }],
  });

describe('folder send window (window)', () => {
  it('reads days, from, to, timeZone and except as written in YAML into weekdays and minutes', () => {
    const { config } = load(`    window:
      days: Mon-Fri
      from: 07:00
      to: "20:00"
      timeZone: Europe/Brussels
      except: [2026-12-25, "2027-01-01"]
`)();
    expect(config.folders[0]?.window).toEqual({
      days: [1, 2, 3, 4, 5],
      from: 420,
      to: 1200,
      timeZone: 'Europe/Brussels',
      except: ['2026-12-25', '2027-01-01'],
    });
  });

  it('opens every day when days is left out, and takes a list of days and ranges', () => {
    const every = folder({ window: { from: '08:00', to: '24:00', timeZone: 'UTC' } });
    expect(every.data?.folders[0]?.window?.days).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const list = folder({ window: { days: ['Sat', 'sun'], from: '08:00', to: '12:00', timeZone: 'UTC' } });
    expect(list.data?.folders[0]?.window?.days).toEqual([6, 7]);
  });

  it('is absent unless configured: such a folder creates jobs at any hour', () => {
    expect(folder({}).data?.folders[0]?.window).toBeUndefined();
  });

  it('refuses from at or after to, naming the key and saying why', () => {
    const err = thrownDocex(
      load(`    window: { days: Mon-Fri, from: "20:00", to: "07:00", timeZone: Europe/Brussels }
`),
    );
    expect(err.code).toBe('DOCEX_CONFIG_INVALID');
    expect(err.details?.['problems']).toEqual([
      'folders[0].window.to: to (07:00) must be later than from (20:00): a window opens and closes on the same day (write 24:00 for midnight; a window across midnight is not supported)',
    ]);
    expect(
      folder({ window: { from: '09:00', to: '09:00', timeZone: 'UTC' } }).error?.issues[0]?.path,
    ).toEqual(['folders', 0, 'window', 'to']);
  });

  it('refuses an unknown time zone, a day name, a time of day and a date that are not ones', () => {
    const result = folder({
      window: {
        days: 'Mon-Fry',
        from: '7h',
        to: '25:00',
        timeZone: 'Europe/Bruxelles',
        except: ['2026-02-30'],
      },
    });
    expect(result.error?.issues.map((i) => `${i.path.slice(3).join('.')}: ${i.message}`)).toEqual([
      'days: expected days such as Mon-Fri, Sat,Sun or Mon,Wed-Fri',
      'from: expected a time of day such as 07:00 (00:00 to 24:00)',
      'to: expected a time of day such as 07:00 (00:00 to 24:00)',
      'timeZone: expected an IANA time zone such as Europe/Brussels or America/New_York',
      'except.0: expected a date such as 2026-12-25',
    ]);
  });
});

describe('folder send time (sendAt)', () => {
  it('reads at with days and timeZone into a time-of-day rule', () => {
    const { config } = load(`    sendAt: { at: "09:00", days: Mon-Fri, timeZone: Europe/Brussels }
`)();
    expect(config.folders[0]?.sendAt).toEqual({
      at: 540,
      days: [1, 2, 3, 4, 5],
      timeZone: 'Europe/Brussels',
    });
  });

  it('reads delay as a duration', () => {
    expect(folder({ sendAt: { delay: '2h' } }).data?.folders[0]?.sendAt).toEqual({ delayMs: 7_200_000 });
  });

  it('refuses both at and delay, neither, at without its time zone and a zero delay', () => {
    const messages = (sendAt: unknown) => folder({ sendAt }).error?.issues.map((i) => i.message);
    expect(messages({ at: '09:00', delay: '2h', timeZone: 'UTC' })).toEqual([
      'give either at (with timeZone) or delay, not both',
    ]);
    expect(messages({})).toEqual(['give either at (with timeZone) or delay, not both']);
    expect(messages({ at: '09:00' })).toEqual([
      'at needs the time zone it is read in (timeZone: Europe/Brussels)',
    ]);
    expect(messages({ delay: '0s' })).toEqual(['must be longer than 0']);
  });
});
