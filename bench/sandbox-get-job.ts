/**
 * Sandbox throughput: GET /jobs/{id} over keep-alive mTLS through the client, at a fixed
 * concurrency. Every request carries the three auth layers, as the real service wants.
 *
 *   npm run bench -- --requests 5000 --concurrency 32
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DocexClient } from '../src/api/client.js';
import { silentLogger } from '../src/core/logger.js';
import { startSandbox } from '../src/sandbox/index.js';
import { SEED } from '../src/sandbox/seed-ids.js';

export interface GetJobResult {
  scenario: 'sandbox GET /jobs/{id}';
  requests: number;
  concurrency: number;
  seconds: number;
  requestsPerSecond: number;
  p50Ms: number;
  p95Ms: number;
}

export async function benchGetJob(requests: number, concurrency: number): Promise<GetJobResult> {
  const stateDir = mkdtempSync(join(tmpdir(), 'docex-bench-'));
  const sandbox = await startSandbox({ stateDir, log: silentLogger() });
  const { credentials, urls } = sandbox;
  const client = new DocexClient({
    apiUrl: urls.api,
    authUrl: urls.auth,
    clientId: credentials.clientId,
    clientSecret: credentials.clientSecret,
    apiKey: credentials.apiKey,
    tls: { ca: credentials.caCertPem, cert: credentials.clientCertPem, key: credentials.clientKeyPem },
  });
  try {
    const job = await client.jobs.createSingleFile({
      workflowId: SEED.workflows.pdfEmail,
      filename: 'bench.pdf',
    });
    await client.jobs.get(job.id); // token and connection warm-up
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) {
          next++;
          const t0 = performance.now();
          await client.jobs.get(job.id);
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      Number((latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0).toFixed(2));
    return {
      scenario: 'sandbox GET /jobs/{id}',
      requests: latencies.length,
      concurrency,
      seconds: Number(seconds.toFixed(2)),
      requestsPerSecond: Math.round(latencies.length / seconds),
      p50Ms: at(0.5),
      p95Ms: at(0.95),
    };
  } finally {
    await client.close();
    await sandbox.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '5000' },
      concurrency: { type: 'string', default: '32' },
    },
  });
  const result = await benchGetJob(Number(values.requests), Number(values.concurrency));
  console.log(
    JSON.stringify(
      { ...result, node: process.version, cpu: cpus()[0]?.model, cores: cpus().length },
      null,
      2,
    ),
  );
}
