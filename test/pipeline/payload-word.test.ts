import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { transportError } from '../../src/api/errors.js';
import { NAMES_PROFILES } from '../../src/domain/names-profile.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { waitFor } from '../support/wait-for.js';
import { clientWith, type Harness, listFiles, useHarness } from './support/agent-harness.js';

let h: Harness;
// The same suite under both names profiles of the sandbox (specification and live reference).
describe.each(NAMES_PROFILES)('names profile %s', (names) => {
  useHarness({ names }, (made) => {
    h = made;
  });

  const W = SEED.workflows.payloadWordEmail;
  const folders = (extra: Record<string, unknown> = {}) =>
    h.config([{ name: 'letters', workflowId: W, mode: 'payload-word', ...extra }]);
  const fileItem = async (
    agent: { journal: { byPath(p: string): Promise<Array<{ id: number; state: string }>> } },
    name: string,
  ) => (await agent.journal.byPath(path.join(h.folderPath('letters'), name)))[0];
  const jobsNamed = async (part: string) => (await h.jobs()).filter((j) => j.name.startsWith(part));

  describe('payload-word folders (CSV, JSON, XML; rows as journal child items)', () => {
    it('creates one payload-word job per CSV row and archives the file with each row’s job', async () => {
      const agent = await h.startAgent(folders());
      h.drop(
        'letters',
        'mailing.csv',
        'EMAIL_ADDRESS;extra.customerId;data.name\r\na@example.com;C1;Ann\r\nb@example.com;C2;Bob\r\n',
      );
      await waitFor(async () => (await fileItem(agent, 'mailing.csv'))?.state === 'done');
      const rows = await agent.journal.rowsOf((await fileItem(agent, 'mailing.csv'))!.id);
      expect(rows.map((r) => r.state)).toEqual(['done', 'done']);
      const jobs = await jobsNamed('mailing.csv');
      expect(jobs.map((j) => j.id).sort()).toEqual(rows.map((r) => r.jobId).sort());
      const day = new Date(h.clock.now()).toISOString().slice(0, 10);
      const result = JSON.parse(
        readFileSync(path.join(h.dir, 'archive', 'letters', day, 'mailing.csv.result.json'), 'utf8'),
      );
      expect(result.rows).toHaveLength(2);
      expect(result.rows[0]).toMatchObject({ label: 'row 2', state: 'done' });
    });

    it('refuses the whole file when one row breaks a payload rule, naming the row and the rule, before any job', async () => {
      const agent = await h.startAgent(folders());
      h.drop('letters', 'bad-rows.csv', 'EMAIL_ADDRESS;data.name\r\nok@example.com;Ok\r\n;Nobody\r\n');
      const errorDir = path.join(h.dir, 'error', 'letters');
      await waitFor(() => listFiles(errorDir).includes('bad-rows.csv.error.txt'));
      const text = readFileSync(path.join(errorDir, 'bad-rows.csv.error.txt'), 'utf8');
      expect(text).toMatch(/row 3: rule 7 \(channel identifiers\)/);
      expect(text).toContain('Nothing was sent from this file.');
      const record = JSON.parse(readFileSync(path.join(errorDir, 'bad-rows.csv.error.json'), 'utf8'));
      expect(record.code).toBe('DOCEX_INPUT_ROWS_INVALID');
      expect(await jobsNamed('bad-rows.csv')).toEqual([]);
      expect(await agent.journal.rowsOf((await fileItem(agent, 'bad-rows.csv'))!.id)).toEqual([]);
    });

    it('sends the good rows and records the bad ones with onInvalidRow: skip', async () => {
      const agent = await h.startAgent(folders({ onInvalidRow: 'skip' }));
      h.drop('letters', 'skip.csv', 'EMAIL_ADDRESS;data.name\r\nok@example.com;Ok\r\n;Nobody\r\n');
      await waitFor(async () => (await fileItem(agent, 'skip.csv'))?.state === 'done');
      const rows = await agent.journal.rowsOf((await fileItem(agent, 'skip.csv'))!.id);
      expect(rows.map((r) => r.state)).toEqual(['done', 'rejected']);
      expect(rows[1]?.rejectReason).toMatch(/rule 7/);
      expect(await jobsNamed('skip.csv')).toHaveLength(1);
    });

    it('takes a JSON payload request (the sample) and an XML file through the folder mapping', async () => {
      const agent = await h.startAgent(
        folders({
          mapping: {
            xml: { recordPath: 'Letters/Letter', fields: { Email: 'EMAIL_ADDRESS', Name: 'data.name' } },
          },
        }),
      );
      h.drop('letters', 'email.json', readFileSync('samples/payload-word/email.json'));
      h.drop(
        'letters',
        'letters.xml',
        '<?xml version="1.0"?><Letters><Letter><Email>x@example.com</Email><Name>X</Name></Letter><Letter><Email>y@example.com</Email><Name>Y</Name></Letter></Letters>',
      );
      await waitFor(
        async () =>
          (await fileItem(agent, 'email.json'))?.state === 'done' &&
          (await fileItem(agent, 'letters.xml'))?.state === 'done',
      );
      expect(await jobsNamed('email.json')).toHaveLength(1);
      expect(await jobsNamed('letters.xml')).toHaveLength(2);
    });

    it('records a row whose create answer was lost by finding its job by name, creating no second job', async () => {
      let calls = 0;
      const lossy = clientWith(h.client, (real) => ({
        createPayloadWord: async (request, opts) => {
          const created = await real.createPayloadWord(request, opts);
          if (++calls === 2)
            throw transportError(
              Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
              'POST',
              '/jobs/payload-word',
            );
          return created;
        },
      }));
      const agent = await h.startAgent(folders(), { client: lossy });
      h.drop('letters', 'lossy.csv', 'EMAIL_ADDRESS\r\n1@example.com\r\n2@example.com\r\n3@example.com\r\n');
      await waitFor(async () => (await fileItem(agent, 'lossy.csv'))?.state === 'done');
      const rows = await agent.journal.rowsOf((await fileItem(agent, 'lossy.csv'))!.id);
      const jobs = await jobsNamed('lossy.csv');
      expect(jobs).toHaveLength(3);
      expect(new Set(rows.map((r) => r.jobId))).toEqual(new Set(jobs.map((j) => j.id)));
      expect(h.logs.some((l) => l['msg'] === 'row job found by name')).toBe(true);
    });
  });
});
