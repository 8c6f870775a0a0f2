/** Gathers what checkInvariants looks at: folder listings with MD5s, and the sandbox's jobs. */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import type { FolderEntry, ObservedJob } from './invariants.js';

export const md5 = (data: Buffer | string) => createHash('md5').update(data).digest('hex');

const SIDE = /\.(result\.json|error\.json|error\.txt)$/;

/** Every file under `dir` (recursively), relative with `/`; data files carry their MD5. */
export function listFolder(dir: string): FolderEntry[] {
  if (!existsSync(dir)) return [];
  const out: FolderEntry[] = [];
  const walk = (sub: string) => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.error.json'))
        out.push({ path: rel, code: refusalCode(path.join(dir, rel)) });
      else if (SIDE.test(entry.name) || entry.name.startsWith('.')) out.push({ path: rel });
      else out.push({ path: rel, md5: md5(readFileSync(path.join(dir, rel))) });
    }
  };
  walk('');
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

function refusalCode(file: string): string | undefined {
  try {
    const code = (JSON.parse(readFileSync(file, 'utf8')) as { code?: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Counts data files (no side files, no hidden names) under a folder, recursively. */
export function countDataFiles(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && !SIDE.test(entry.name) && !entry.name.startsWith('.')) n++;
  }
  return n;
}

/** The sandbox's control API (files host, server TLS only, loopback). */
export interface ControlClient {
  call(method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown): Promise<unknown>;
  jobs(): Promise<ObservedJob[]>;
  close(): Promise<void>;
}

export function controlClient(controlUrl: string, caPem: string): ControlClient {
  const dispatcher = new Agent({ connect: { ca: caPem } });
  const call: ControlClient['call'] = async (method, route, body) => {
    const res = await request(`${controlUrl}${route}`, {
      method,
      dispatcher,
      ...(body !== undefined
        ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
        : {}),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`control ${method} ${route}: ${res.statusCode} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    call,
    async jobs() {
      const answer = (await call('GET', '/jobs')) as { items: Required<ObservedJob>[] };
      return answer.items.map(({ id, name, uploadedMd5, workflowId, companyId }) => ({
        id,
        name,
        uploadedMd5,
        workflowId,
        companyId,
      }));
    },
    close: () => dispatcher.close(),
  };
}
