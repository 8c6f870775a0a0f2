import { readFileSync } from 'node:fs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { NAMES_PROFILES } from '../../src/domain/names-profile.js';
import { isFinalSendingEvent } from '../../src/domain/wire.js';
import {
  findIdentifiers,
  missingIdentifiersError,
  pdfIdentifierRules,
} from '../../src/sandbox/content/pdf-identifiers.js';
import { createPdfTextExtractor } from '../../src/sandbox/content/pdf-text.js';
import { SEED } from '../../src/sandbox/seed-ids.js';
import { makePdf } from '../pipeline/support/agent-harness.js';
import { startTestSandbox, type TestSandbox, until } from './sandbox-harness.js';

const W = SEED.workflows;
const sample = (rel: string) => readFileSync(new URL(`../../samples/${rel}`, import.meta.url));

async function pdfOfPages(pages: string[][]): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const page = doc.addPage([595, 842]);
    lines.forEach((line, i) => {
      page.drawText(line, { x: 50, y: 780 - i * 16, size: 11, font });
    });
  }
  return Buffer.from(await doc.save());
}

async function zipOf(entries: Record<string, Buffer>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) z.addBuffer(data, name);
  z.end();
  const chunks: Buffer[] = [];
  for await (const c of z.outputStream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('finding channel identifiers in the text of a PDF', () => {
  it('takes the rules of an input source with a kind and a label, and nothing else', () => {
    expect(
      pdfIdentifierRules({
        type: 'PDF',
        channelIdentifiers: [
          { kind: 'EMAIL_ADDRESS', label: ' Email: ' },
          { kind: 'PHONE_NUMBER' },
          { label: 'x' },
          { kind: 'FIRST_NAME', label: '' },
          null,
        ],
      }),
    ).toEqual([{ kind: 'EMAIL_ADDRESS', label: 'Email:' }]);
    expect(pdfIdentifierRules({ type: 'PDF' })).toEqual([]);
  });

  it('reads the rest of the first line that begins with the label, on any page, whatever its case', () => {
    const pages = [
      'Invoice 1\nStreet number: 12\nEMAIL:\n',
      'To: a@x.be\n  email:  ann@example.com \nStreet: Meir\n',
    ];
    const rules = [
      { kind: 'EMAIL_ADDRESS', label: 'Email:' },
      { kind: 'ADDRESS_STREET', label: 'Street:' },
      { kind: 'ADDRESS_STREET_NUMBER', label: 'Street number:' },
      { kind: 'ADDRESS_CITY', label: 'City:' },
    ];
    expect(findIdentifiers(pages, rules)).toEqual({
      found: [
        { kind: 'EMAIL_ADDRESS', value: 'ann@example.com' },
        { kind: 'ADDRESS_STREET', value: 'Meir' },
        { kind: 'ADDRESS_STREET_NUMBER', value: '12' },
      ],
      missing: [{ kind: 'ADDRESS_CITY', label: 'City:' }],
    });
  });

  it('names a missing DOCPORTAL identifier as the names profile spells it', () => {
    const missing = [{ kind: 'DOCPORTAL_TOKEN_SET_VALUE2', label: 'Doccle token 2:' }];
    expect(missingIdentifiersError('s.pdf', missing, 'spec').message).toBe(
      's.pdf: channel identifier DOCPORTAL_TOKEN_SET_VALUE2 (label "Doccle token 2:") not found in the text of the document',
    );
    expect(missingIdentifiersError('s.pdf', missing, 'reference').message).toContain(
      'DOCCLE_TOKEN_SET_VALUE2',
    );
  });

  describe('the text extractor (pdfjs-dist in a worker thread)', () => {
    const extractor = createPdfTextExtractor();
    afterAll(() => extractor.close());

    it('answers the text of each page, and stops after the page where every label was seen', async () => {
      const pdf = await pdfOfPages([['Invoice 9', 'Email: a@x.be'], ['Page two'], ['Page three']]);
      expect(await extractor.pages(pdf, [])).toEqual([
        'Invoice 9\nEmail: a@x.be\n',
        'Page two\n',
        'Page three\n',
      ]);
      expect(await extractor.pages(pdf, ['email:'])).toEqual(['Invoice 9\nEmail: a@x.be\n']);
      expect(await extractor.pages(pdf, ['Email:', 'City:'])).toHaveLength(3);
    });

    it('refuses a file that is not a PDF and goes on reading the next', async () => {
      await expect(extractor.pages(Buffer.from('%PDF-1.4 nothing else'), [])).rejects.toThrow();
      expect(await extractor.pages(await pdfOfPages([['ok']]), [])).toEqual(['ok\n']);
    });

    it('ends a read that takes too long, and a fresh worker reads the next file', async () => {
      const slow = createPdfTextExtractor({ timeoutMs: 1 });
      const pdf = await pdfOfPages([['late']]);
      // The first read also starts the worker and loads pdfjs: far more than 1 ms.
      await expect(slow.pages(pdf, [])).rejects.toThrow('reading the text took longer than 1 ms');
      await slow.close();
      expect(await extractor.pages(pdf, [])).toEqual(['late\n']);
    });
  });
});

describe.each(NAMES_PROFILES)(
  'PDF workflows read their recipients from the PDF (names profile %s)',
  (names) => {
    let t: TestSandbox;
    beforeAll(async () => {
      t = await startTestSandbox({ names });
    });
    afterAll(async () => {
      await t?.stop();
    });

    async function send(workflowId: string, filename: string, body: Buffer) {
      const job = await t.api('POST', '/jobs/single-file', { body: { workflowId, filename } });
      expect(job.status).toBe(201);
      expect((await t.files('PUT', job.body.fileUploadUrl, { body })).status).toBe(200);
      await t.sandbox.settle();
      return job.body.id as string;
    }

    async function finalEvents(jobId: string) {
      return until(async () => {
        await t.advance(60_000);
        const items = (await t.api('GET', `/sending-events?jobId=${jobId}`)).body.items;
        return items.length > 0 && items.every(isFinalSendingEvent) ? items : undefined;
      });
    }

    it('declares where each identifier of a seeded PDF workflow is found, in the profile’s spelling', async () => {
      const email = (await t.api('GET', `/workflows/${W.pdfEmail}`)).body.inputSource;
      expect(email).toMatchObject({
        type: 'PDF',
        textExtractionMethod: 'TEXT_LAYER',
        channelIdentifiers: [{ kind: 'EMAIL_ADDRESS', label: 'Email:' }],
      });
      const prefix = names === 'reference' ? 'DOCCLE' : 'DOCPORTAL';
      const listed = (await t.api('GET', '/workflows?maxItems=100')).body.items;
      expect(
        listed.find((w: { id: string }) => w.id === W.pdfDocportal).inputSource.channelIdentifiers,
      ).toEqual([
        { kind: `${prefix}_TOKEN_SET_VALUE1`, label: 'Doccle token 1:' },
        { kind: `${prefix}_TOKEN_SET_VALUE2`, label: 'Doccle token 2:' },
      ]);
    });

    it('sends to the address in the text, and fails the sending of a PDF without one, naming it, again on resend', async () => {
      const good = await send(
        W.pdfEmail,
        'good.pdf',
        await makePdf('x', { recipient: { EMAIL_ADDRESS: 'bo@example.com' } }),
      );
      const [sent] = await finalEvents(good);
      expect(sent).toMatchObject({ businessStatus: 'SUCCESS', errorList: [] });
      expect(sent.properties).toContainEqual({ name: 'recipient', value: 'bo@example.com' });

      const bad = await send(W.pdfEmail, 'bad.pdf', await makePdf('no address here', { recipient: false }));
      const [failed] = await finalEvents(bad);
      const error = {
        code: 'CHANNEL_IDENTIFIER_NOT_FOUND',
        message:
          'bad.pdf: channel identifier EMAIL_ADDRESS (label "Email:") not found in the text of the document',
      };
      expect(failed).toMatchObject({ businessStatus: 'FAILURE', status: 'FAILURE', errorList: [error] });
      expect(failed.taskDetails).toEqual([
        expect.objectContaining({
          taskType: 'EMAIL',
          status: 'FAILURE',
          errors: [{ ...error, taskType: 'EMAIL' }],
        }),
      ]);
      expect(failed.documents.map((d: { type: string }) => d.type).sort()).toEqual([
        'ORIGINAL',
        'SUBMISSION_REPORT',
      ]);

      const resent = await t.api('POST', `/sending-events/${failed.id}/resend`);
      expect(resent.status).toBe(201);
      const again = await until(async () => {
        await t.advance(60_000);
        const e = (await t.api('GET', `/sending-events/${resent.body.id}`)).body;
        return isFinalSendingEvent(e) ? e : undefined;
      });
      expect(again).toMatchObject({ businessStatus: 'FAILURE', errorList: [error] });
    });

    it('checks each PDF of a ZIP on its own, and names a missing Doccle token as the profile spells it', async () => {
      const zip = await zipOf({
        'a.pdf': await makePdf('a', { recipient: { EMAIL_ADDRESS: 'a@example.com' } }),
        'b.pdf': await makePdf('b', { recipient: false }),
      });
      const events = await finalEvents(await send(W.pdfEmail, 'two.zip', zip));
      const by = (ref: string) =>
        events.find((e: { sendingSourceFileReference: string }) => e.sendingSourceFileReference === ref);
      expect(by('a.pdf')).toMatchObject({ businessStatus: 'SUCCESS' });
      expect(by('b.pdf')).toMatchObject({
        businessStatus: 'FAILURE',
        errorList: [{ code: 'CHANNEL_IDENTIFIER_NOT_FOUND' }],
      });

      const tokenOnly = await pdfOfPages([['Statement'], ['Doccle token 1: T1']]);
      const [doccle] = await finalEvents(await send(W.pdfDocportal, 'token.pdf', tokenOnly));
      const kind = names === 'reference' ? 'DOCCLE_TOKEN_SET_VALUE2' : 'DOCPORTAL_TOKEN_SET_VALUE2';
      expect(doccle.errorList).toEqual([
        {
          code: 'CHANNEL_IDENTIFIER_NOT_FOUND',
          message: `token.pdf: channel identifier ${kind} (label "Doccle token 2:") not found in the text of the document`,
        },
      ]);
    });

    it('the samples: the Doccle statement is delivered, the invoice without an e-mail line fails', async () => {
      const [doccle] = await finalEvents(
        await send(
          W.pdfDocportal,
          'statement-doccle-2026-11.pdf',
          sample('pdf-docportal/statement-doccle-2026-11.pdf'),
        ),
      );
      expect(doccle).toMatchObject({ businessStatus: 'SUCCESS' });
      expect(doccle.properties).toContainEqual({ name: 'recipient', value: 'C001-2026' });
      const [unaddressed] = await finalEvents(
        await send(
          W.pdfEmail,
          'invoice-2026-0005.pdf',
          sample('pdf-email-without-recipient/invoice-2026-0005.pdf'),
        ),
      );
      expect(unaddressed).toMatchObject({
        businessStatus: 'FAILURE',
        errorList: [
          { code: 'CHANNEL_IDENTIFIER_NOT_FOUND', message: expect.stringContaining('EMAIL_ADDRESS') },
        ],
      });
    });
  },
);
