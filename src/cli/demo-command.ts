import path from 'node:path';
import type { Command } from 'commander';
import { createLogger } from '../core/logger.js';
import { startSandbox } from '../sandbox/index.js';
import { runDemo } from './demo.js';
import { parseSpeed } from './options.js';
import { waitForStopSignal } from './signals.js';

interface DemoCommandOptions {
  stateDir: string;
  samples: string;
  out: string;
  speed: number;
  exit?: boolean;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('start the sandbox, submit every sample through the client, save the proofs, keep running')
    .option('--state-dir <dir>', 'sandbox state folder', './var/sandbox')
    .option('--samples <dir>', 'folder of samples, one sub-folder per seeded workflow', './samples')
    .option('--out <dir>', 'where the delivery proofs are saved', './var/demo/proofs')
    .option('--speed <n>', 'sending events run this many times faster', parseSpeed, 50)
    .option('--exit', 'stop once the demo is done instead of keeping the sandbox up')
    .action(async (opts: DemoCommandOptions) => {
      const log = createLogger({ name: 'docex-demo', level: process.env['DOCEX_LOG_LEVEL'] ?? 'warn' });
      const signalled = waitForStopSignal();
      const sandbox = await startSandbox({
        stateDir: opts.stateDir,
        apiPort: 8443,
        authPort: 8444,
        filesPort: 8445,
        adminPort: 8446,
        speed: opts.speed,
        log,
      });
      try {
        process.stdout.write(`sandbox API ${sandbox.urls.api}; submitting samples from ${opts.samples}\n`);
        const results = await runDemo({ sandbox, samplesDir: opts.samples, outDir: opts.out, log });
        for (const r of results) {
          const outcomes = r.events.map((e) => e.businessStatus).join(',') || 'no events';
          const proofs = r.events.reduce((n, e) => n + e.proofs.length, 0);
          process.stdout.write(`  ${r.sample.padEnd(44)} job ${r.jobId}  ${outcomes}  proofs: ${proofs}\n`);
        }
        process.stdout.write(
          [
            `proofs saved under ${path.resolve(opts.out)}`,
            `credentials and an agent config fragment: ${sandbox.paths.stateDir}`,
            opts.exit ? '' : 'sandbox keeps running for curl (see README); Ctrl+C stops it.',
            '',
          ].join('\n'),
        );
        if (!opts.exit) await signalled;
      } finally {
        await sandbox.stop();
        log.flush();
      }
    });
}
