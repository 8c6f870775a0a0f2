/**
 * The local check against the real sandbox: workflows are fetched as the agent fetches them at
 * start-up, the samples pass, and for every row the local verdict is the sandbox's verdict.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocexClient } from '../../../src/api/client.js';
import { ApiError } from '../../../src/api/errors.js';
import { silentLogger } from '../../../src/core/logger.js';
import type { PayloadEndpoint } from '../../../src/domain/payload-rules.js';
import type { PayloadJobRequest, Workflow } from '../../../src/domain/wire.js';
import { checkRows } from '../../../src/pipeline/payload/check-rows.js';
import { payloadRequestsFromCsv } from '../../../src/pipeline/payload/csv-requests.js';
import {
  payloadPdfFromSidecar,
  payloadRequestsFromJson,
} from '../../../src/pipeline/payload/json-requests.js';
import type { BuildResult, BuiltRow } from '../../../src/pipeline/payload/types.js';
import { type RunningSandbox, startSandbox } from '../../../src/sandbox/index.js';
import { SEED } from '../../../src/sandbox/seed-ids.js';

const W = SEED.workflows;
const SAMPLES = new URL('../../../samples/', import.meta.url);
let dir: string;
let sandbox: RunningSandbox;
let client: DocexClient;
const workflows = new Map<string, Workflow>();

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'docex-payload-'));
  sandbox = await startSandbox({ stateDir: path.join(dir, 'state'), log: silentLogger() });
  const c = sandbox.credentials;
  client = new DocexClient({
    apiUrl: sandbox.urls.api,
    authUrl: sandbox.urls.auth,
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    apiKey: c.apiKey,
    tls: { ca: c.caCertPem, cert: c.clientCertPem, key: c.clientKeyPem },
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
  });
  for (const id of [
    W.payloadWordEmail,
    W.payloadWordQerds,
    W.payloadWordEbox,
    W.payloadWordDocportal,
    W.payloadWordPrintFr,
    W.payloadPdfPrint,
  ]) {
    workflows.set(id, await client.workflows.get(id));
  }
});

afterAll(async () => {
  await client?.close();
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function rowsOf(res: BuildResult): BuiltRow[] {
  if (!res.ok) throw new Error(res.reason);
  return res.rows;
}

async function sandboxAccepts(request: PayloadJobRequest, endpoint: PayloadEndpoint): Promise<boolean> {
  try {
    if (endpoint === 'payload-word') await client.jobs.createPayloadWord(request);
    else await client.jobs.createPayloadPdf(request);
    return true;
  } catch (err) {
    if (err instanceof ApiError && (err.status === 400 || err.status === 415)) return false;
    throw err;
  }
}

describe('payload checks against the seeded workflows', () => {
  it('accept every payload-word sample for its workflow', () => {
    const files = readdirSync(new URL('payload-word/', SAMPLES)).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(5);
    for (const f of files) {
      const text = readFileSync(new URL(`payload-word/${f}`, SAMPLES));
      const workflowId = JSON.parse(text.toString()).workflowId as string;
      const res = checkRows(
        rowsOf(payloadRequestsFromJson(text, { workflowId, fileName: f })),
        workflows.get(workflowId)!,
        'payload-word',
      );
      expect(res, f).toMatchObject({ fileRejected: false, rejected: [] });
      expect(res.accepted).toHaveLength(1);
    }
  });

  it('accept the payload-pdf sample PDF with its sidecar', () => {
    const sidecar = readFileSync(new URL('payload-pdf-print/letter-with-payment.json', SAMPLES));
    const rows = rowsOf(
      payloadPdfFromSidecar('letter-with-payment.pdf', sidecar, { workflowId: W.payloadPdfPrint }),
    );
    const res = checkRows(rows, workflows.get(W.payloadPdfPrint)!, 'payload-pdf');
    expect(res).toMatchObject({
      fileRejected: false,
      rejected: [],
      accepted: [{ file: 'letter-with-payment.pdf' }],
    });
  });

  it('give the sandbox verdict for every row of a mixed CSV', async () => {
    const cases: [string, string, PayloadEndpoint][] = [
      [W.payloadWordEmail, 'EMAIL_ADDRESS;data.name\r\njane@example.com;Jane\r\n;Nobody\r\n', 'payload-word'],
      [
        W.payloadWordPrintFr,
        'ADDRESS_FIRST_NAME;ADDRESS_LAST_NAME;ADDRESS_STREET;ADDRESS_STREET_NUMBER;ADDRESS_PO_BOX;ADDRESS_POSTAL_CODE;ADDRESS_CITY;ADDRESS_COUNTRY_CODE;data.x\r\n' +
          'Marie;Dupont;Rue de Rivoli;12;;75001;Paris;fr;1\r\n' +
          'Marie;Dupont;Rue de Rivoli;12;BP 7;75001;Paris;FR;1\r\n' +
          'Marie;;Rue de Rivoli;12;;75001;Paris;FR;1\r\n' +
          'Marie;Dupont;Rue de Rivoli;12;;75001;Paris;FRA;1\r\n',
        'payload-word',
      ],
      [
        W.payloadWordQerds,
        'EMAIL_ADDRESS;COMPANY_IDENTIFICATION_NUMBER;data.x\r\na@x.be;0123456789;1\r\na@x.be;;1\r\n',
        'payload-word',
      ],
      [
        W.payloadWordEbox,
        'NATIONAL_REGISTER_NUMBER;encrypt.NATIONAL_REGISTER_NUMBER;data.x\r\n85073100145;yes;1\r\n;;1\r\n',
        'payload-word',
      ],
      [
        W.payloadPdfPrint,
        'ADDRESS_COMPANY_NAME;ADDRESS_PO_BOX;ADDRESS_POSTAL_CODE;ADDRESS_CITY;ADDRESS_COUNTRY_CODE;INVOICE_AMOUNT;INVOICE_DUE_DATE;INVOICE_COMMUNICATION;filename\r\n' +
          'Acme NV;PB 12;1000;Brussels;BE;10.00;2026-12-31;+++090/9337/55493+++;a.pdf\r\n' +
          'Acme NV;PB 12;1000;Brussels;BE;;;;a.pdf\r\n' +
          'Acme NV;PB 12;1000;Brussels;BE;10.00;2026-12-31;+++090/9337/55493+++;a.docx\r\n',
        'payload-pdf',
      ],
    ];
    let compared = 0;
    let refused = 0;
    for (const [workflowId, csv, endpoint] of cases) {
      const rows = rowsOf(payloadRequestsFromCsv(csv, { workflowId, fileName: 'rows.csv' }));
      const local = checkRows(rows, workflows.get(workflowId)!, endpoint, 'skip');
      const acceptedRows = new Set(local.accepted.map((a) => a.row));
      for (const row of rows) {
        if (!('request' in row)) continue;
        const remote = await sandboxAccepts(row.request, endpoint);
        expect(remote, `${workflowId} row ${row.row}: ${JSON.stringify(local.rejected)}`).toBe(
          acceptedRows.has(row.row),
        );
        compared += 1;
        if (!remote) refused += 1;
      }
    }
    expect(compared).toBe(13);
    expect(refused).toBe(8);
  });
});
