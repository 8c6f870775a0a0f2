import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { DocexClient } from '../api/client.js';
import type { Logger } from '../core/logger.js';
import { isFinalSendingEvent, type PayloadJobRequest, type SendingEvent } from '../domain/wire.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { SEED } from '../sandbox/seed-ids.js';

/**
 * The walk `npm start` shows until the drop-folder pipeline lands: every file of samples/ is
 * submitted to its seeded workflow through the real client, followed to its final state, and its
 * delivery proofs are saved. It exercises the same path the agent will take.
 */
const SINGLE_FILE_SAMPLES: Record<string, { workflowId: string; managedCompanyId?: string }> = {
  'pdf-email': { workflowId: SEED.workflows.pdfEmail },
  'pdf-print': { workflowId: SEED.workflows.pdfPrint },
  'pdf-registered': { workflowId: SEED.workflows.pdfRegistered },
  'data-file': { workflowId: SEED.workflows.dataFile },
  ubl: { workflowId: SEED.workflows.ubl },
  'managed-pdf-email': {
    workflowId: SEED.workflows.managedPdfEmail,
    managedCompanyId: SEED.managedCompanyId,
  },
};

export interface DemoResult {
  sample: string;
  jobId: string;
  events: { id: string; businessStatus: string; proofs: string[] }[];
}

export interface DemoOptions {
  sandbox: RunningSandbox;
  samplesDir: string;
  outDir: string;
  log: Logger;
  pollIntervalMs?: number;
  timeoutMs?: number;
}

export async function runDemo(options: DemoOptions): Promise<DemoResult[]> {
  const { sandbox, samplesDir, outDir, log } = options;
  const { credentials, urls } = sandbox;
  const client = new DocexClient({
    apiUrl: urls.api,
    authUrl: urls.auth,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    apiKey: credentials.apiKey,
    tls: { ca: credentials.caCertPem, cert: credentials.clientCertPem, key: credentials.clientKeyPem },
    log,
  });
  try {
    const submitted: { sample: string; jobId: string; managedCompanyId?: string }[] = [];
    for (const [folder, target] of Object.entries(SINGLE_FILE_SAMPLES)) {
      for (const file of await readdir(path.join(samplesDir, folder))) {
        const call = target.managedCompanyId ? { managedCompanyId: target.managedCompanyId } : {};
        const job = await client.jobs.createSingleFile(
          { workflowId: target.workflowId, filename: file },
          call,
        );
        await client.jobs.uploadFile(job.fileUploadUrl, path.join(samplesDir, folder, file));
        submitted.push({ sample: `${folder}/${file}`, jobId: job.id, ...call });
      }
    }
    for (const file of await readdir(path.join(samplesDir, 'payload-word'))) {
      const request = JSON.parse(
        await readFile(path.join(samplesDir, 'payload-word', file), 'utf8'),
      ) as PayloadJobRequest;
      const job = await client.jobs.createPayloadWord(request);
      submitted.push({ sample: `payload-word/${file}`, jobId: job.id });
    }
    const sidecar = path.join(samplesDir, 'payload-pdf-print', 'letter-with-payment.json');
    const request = JSON.parse(await readFile(sidecar, 'utf8')) as PayloadJobRequest;
    const payloadPdf = await client.jobs.createPayloadPdf(request);
    await client.jobs.uploadFile(payloadPdf.fileUploadUrl, sidecar.replace(/\.json$/, '.pdf'));
    submitted.push({ sample: 'payload-pdf-print/letter-with-payment.pdf', jobId: payloadPdf.id });
    log.info({ jobs: submitted.length }, 'demo jobs submitted');

    const results: DemoResult[] = [];
    for (const job of submitted) {
      const call = job.managedCompanyId ? { managedCompanyId: job.managedCompanyId } : {};
      const events = await waitForFinalEvents(client, job.jobId, call, options);
      const saved: DemoResult['events'] = [];
      for (const event of events) {
        const proofs: string[] = [];
        for (const doc of event.documents ?? []) {
          if (doc.type !== 'DELIVERY_PROOF' && doc.type !== 'SUBMISSION_REPORT') continue;
          const { url } = await client.sendingEvents.downloadUrl(event.id, doc.fileReference, call);
          const target = path.join(outDir, job.sample.replace(/\.[^.]+$/, ''), `${event.id}-${doc.type}.pdf`);
          await mkdir(path.dirname(target), { recursive: true });
          await client.sendingEvents.downloadFile(url, target);
          proofs.push(target);
        }
        saved.push({ id: event.id, businessStatus: event.businessStatus, proofs });
      }
      results.push({ sample: job.sample, jobId: job.jobId, events: saved });
    }
    return results;
  } finally {
    await client.close();
  }
}

async function waitForFinalEvents(
  client: DocexClient,
  jobId: string,
  call: { managedCompanyId?: string },
  options: DemoOptions,
): Promise<SendingEvent[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  for (;;) {
    const job = await client.jobs.get(jobId, call);
    const events: SendingEvent[] = [];
    for await (const event of client.sendingEvents.iterate({ jobId }, call)) events.push(event);
    const expected = job.sendingEventCount ?? events.length;
    const settled =
      job.status === 'FAILED' || (events.length >= expected && events.every(isFinalSendingEvent));
    if (settled && (events.length > 0 || job.status === 'FAILED')) return events;
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not reach a final state in time`);
    await new Promise((resolve) => setTimeout(resolve, options.pollIntervalMs ?? 500));
  }
}
