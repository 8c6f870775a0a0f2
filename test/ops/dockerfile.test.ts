/**
 * The Dockerfile, linted by dockerfile-utils (the validator behind VS Code's Dockerfile support:
 * no Docker engine runs here), every check raised to an error, plus what the issue asks of the
 * image: Node LTS slim pinned to an exact release (or a digest), multi-stage, the shared build
 * script, only what runs in the final stage, a non-root user, volumes, a liveness HEALTHCHECK on
 * /healthz.
 */
import { readFileSync } from 'node:fs';
import { ValidationSeverity, validate } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';

const text = readFileSync('Dockerfile', 'utf8');
const strict = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
};
const problems = (content: string) =>
  validate(content, strict).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);

/** Instructions of the last stage (the image that runs), continuation lines joined. */
function finalStage(content: string): string[] {
  const lines = content
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  const lastFrom = lines.map((l) => l.startsWith('FROM ')).lastIndexOf(true);
  return lines.slice(lastFrom);
}

describe('Dockerfile', () => {
  it('has no lint problem, with every dockerfile-utils check as an error', () => {
    expect(problems(text)).toEqual([]);
  });

  it('would report a broken instruction (so the lint test can fail)', () => {
    expect(
      problems(`${text}\nHEALTHCHECK --interval=soon CMD true\nMAINTAINER x\n`).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('builds in a separate stage on a Node LTS slim base pinned to an exact release, with the script CI runs', () => {
    // node:<major>.<minor>.<patch>-<debian>-slim, optionally @sha256:<digest>; never a moving tag.
    expect(text).toMatch(/^ARG NODE_IMAGE=node:(22|24)\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/m);
    expect(text.match(/^FROM \$\{NODE_IMAGE\}/gm)).toHaveLength(2);
    expect(text).toMatch(/^RUN scripts\/container-build.sh deps$/m);
    expect(text).toMatch(/^RUN scripts\/container-build.sh build$/m);
  });

  it('copies into the image only package.json, dist/ and the production dependencies', () => {
    const copies = finalStage(text).filter((l) => l.startsWith('COPY '));
    expect(copies).toEqual([
      'COPY --from=build /build/package.json ./',
      'COPY --from=build /build/node_modules ./node_modules',
      'COPY --from=build /build/dist ./dist',
    ]);
  });

  it('runs as a non-root user with state and folders as volumes and a liveness HEALTHCHECK on /healthz', () => {
    const stage = finalStage(text);
    const user = stage.find((l) => l.startsWith('USER '));
    expect(user).toBe('USER docex');
    expect(stage.indexOf(user!)).toBeLessThan(stage.findIndex((l) => l.startsWith('ENTRYPOINT ')));
    expect(stage).toContain('VOLUME ["/var/lib/docex-agent", "/srv/docex"]');
    const health = stage.find((l) => l.startsWith('HEALTHCHECK '));
    expect(health).toMatch(/CMD \["node", "-e", ".*http:\/\/127\.0\.0\.1:9464\/healthz'/);
    expect(health).not.toContain('readyz');
    expect(stage.some((l) => /apt-get|g\+\+/.test(l))).toBe(false);
  });

  it('takes the credentials layout of the systemd service, where the documented docker run mounts it', () => {
    const stage = finalStage(text);
    expect(stage.find((l) => l.startsWith('ENV '))).toMatch(
      /CREDENTIALS_DIRECTORY=\/etc\/docex-agent\/credentials(\s|$)/,
    );
    const docs = readFileSync('docs/operations.md', 'utf8');
    const run = /```sh\n(docker build[\s\S]*?)```/.exec(docs)?.[1] ?? '';
    expect(run).toContain('-v /etc/docex-agent/container-credentials:/etc/docex-agent/credentials:ro');
    expect(run).toContain('-e CREDENTIALS_DIRECTORY=/etc/docex-agent/credentials');
    expect(run).toContain('-v /etc/docex-agent/agent.yaml:/etc/docex-agent/agent.yaml:ro');
    expect(run).toContain('sudo install -o 10001 -g 10001 -m 0400');
    for (const name of ['client-secret', 'api-key', 'client.key', 'client.pem', 'ca.pem']) {
      expect(run).toContain(`/etc/docex-agent/credentials/${name}`);
    }
  });

  it('has a health check command that passes on 200 and fails on 503 or no answer', async () => {
    const health = finalStage(text).find((l) => l.startsWith('HEALTHCHECK '))!;
    const json = health.slice(health.indexOf('CMD ') + 4);
    const [, flag, script] = JSON.parse(json) as string[];
    const { createServer } = await import('node:http');
    const { execFile } = await import('node:child_process');
    const run = (port: number) =>
      new Promise<number>((resolve) => {
        const code = script!.replace('127.0.0.1:9464', `127.0.0.1:${port}`);
        execFile(process.execPath, [flag!, code], (err) =>
          resolve(err ? ((err as { code?: number }).code ?? 1) : 0),
        );
      });
    let status = 200;
    const server = createServer((req, res) => {
      res.statusCode = req.url === '/healthz' ? status : 404;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      expect(await run(port)).toBe(0);
      status = 503;
      expect(await run(port)).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await run(port)).toBe(1);
  });
});
