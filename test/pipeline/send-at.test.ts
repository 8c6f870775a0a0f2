import { describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/schema.js';
import type { PayloadJobRequest } from '../../src/domain/wire.js';
import { withSendTime } from '../../src/pipeline/send-at.js';
import type { FolderRuntime } from '../../src/pipeline/types.js';
import { EMAIL_WORD } from './payload/workflows.js';

const runtime = (sendAt?: unknown): FolderRuntime => {
  const config = agentConfigSchema.parse({
    sandbox: { enabled: true },
    folders: [
      {
        name: 'letters',
        source: { type: 'local', path: 'in/letters' },
        workflowId: EMAIL_WORD.id,
        ...(sendAt ? { sendAt } : {}),
      },
    ],
  });
  return { config: config.folders[0]!, mode: 'payload-word', workflow: EMAIL_WORD };
};

const request: PayloadJobRequest = {
  workflowId: EMAIL_WORD.id,
  jobName: 'j',
  filename: 'f.docx',
  payload: { channelIdentifiers: [], extraInfoIdentifiers: [], templateData: {} },
};

describe('a folder’s send time on a payload job (sendAt)', () => {
  // Friday 27 November 2026, 10:30 CET.
  const now = Date.parse('2026-11-27T09:30:00Z');

  it('gives the next such time of day: Monday 09:00 Brussels after a Friday morning past nine', () => {
    const sent = withSendTime(
      request,
      runtime({ at: '09:00', days: 'Mon-Fri', timeZone: 'Europe/Brussels' }),
      now,
    );
    expect(sent.sendingEventExecutionDateUtc).toBe('2026-11-30T08:00:00.000Z');
  });

  it('gives a fixed delay after the create', () => {
    expect(withSendTime(request, runtime({ delay: '2h' }), now).sendingEventExecutionDateUtc).toBe(
      '2026-11-27T11:30:00.000Z',
    );
  });

  it('leaves a row’s own execution date, and a folder without sendAt sends at once', () => {
    const own = { ...request, sendingEventExecutionDateUtc: '2026-12-24T08:00:00.000Z' };
    expect(withSendTime(own, runtime({ delay: '2h' }), now)).toBe(own);
    expect(withSendTime(request, runtime(), now)).toBe(request);
  });
});
