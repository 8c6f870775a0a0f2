/**
 * `docex-agent credentials init|check`: the options here; the implementation
 * (credentials-runner.ts, node-forge) is loaded when a sub-command runs.
 */
import type { Command } from 'commander';

export function registerCredentialsCommand(program: Command): void {
  const credentials = program
    .command('credentials')
    .description('the mutual-TLS client key, certificate request and certificate');
  credentials
    .command('init')
    .description(
      'create a 2048-bit RSA private key (mode 0600) and a certificate signing request for the portal',
    )
    .requiredOption(
      '--cn <name>',
      'subject common name of the request (your choice, e.g. the host or company)',
    )
    .requiredOption(
      '--out <dir>',
      'folder for client.key and client.csr (created; existing files are never replaced)',
    )
    .option('--org <name>', 'organization name in the subject')
    .option('--country <code>', 'two-letter country code in the subject')
    .action(async (opts: { cn: string; out: string; org?: string; country?: string }) => {
      const { credentialsInitCommand } = await import('./credentials-runner.js');
      await credentialsInitCommand(opts);
    });
  credentials
    .command('check')
    .description('the certificate and key match, chain to the configured CA, days to expiry')
    .option(
      '-c, --config <file>',
      'configuration file whose service.tls files are checked (default ./config/agent.yaml unless --cert, --key and --ca are all given)',
    )
    .option('--cert <file>', 'client certificate (PEM), instead of the configured one')
    .option('--key <file>', 'private key (PEM), instead of the configured one')
    .option('--ca <file>', 'CA certificate(s) (PEM), instead of the configured one')
    .action(async (opts: { config?: string; cert?: string; key?: string; ca?: string }) => {
      const { credentialsCheckCommand } = await import('./credentials-runner.js');
      await credentialsCheckCommand(opts);
    });
}
