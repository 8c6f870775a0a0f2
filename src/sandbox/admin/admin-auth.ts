/**
 * Interface B authentication (decisions, Authentication): an OAuth2 client-credentials token of
 * the partner-admin client plus x-api-key; no client certificate. Its tokens are stored under
 * their own kind, so an Interface A token opens nothing here and the other way round.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { header, mayManage, sameSecret, type TokenRecord, tokenKey, unauthorized } from '../auth.js';
import type { SandboxContext } from '../context.js';
import { type Caller, problem, type SandboxRequest } from '../http.js';

export const ADMIN_TOKEN_KIND = 'admin-token';

export interface AdminCredentials {
  clientId: string;
  clientSecret: string;
}

/** The partner-admin client, created at first start next to `credentials.json` (mode 0600). */
export function loadAdminCredentials(stateDir: string): AdminCredentials {
  const file = path.join(stateDir, 'admin-credentials.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as AdminCredentials;
  const credentials: AdminCredentials = {
    clientId: `sandbox-admin-${randomBytes(4).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
  };
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return credentials;
}

/**
 * API key (403), then the partner-admin bearer token (401). x-managed-company-id is not needed
 * (the company is in the path) but, when sent, follows Interface A's rule: managed or 403.
 */
export function authenticateAdmin(ctx: SandboxContext, apiKey: string, req: SandboxRequest): Caller {
  const given = header(req, 'x-api-key');
  if (given === undefined || !sameSecret(given, apiKey)) {
    throw problem(403, 'the x-api-key header is missing or wrong');
  }
  const match = /^Bearer\s+(\S+)$/i.exec(header(req, 'authorization') ?? '');
  if (!match?.[1]) throw unauthorized('the bearer token is missing');
  const record = ctx.store.get<TokenRecord>(ADMIN_TOKEN_KIND, tokenKey(match[1]));
  if (!record) throw unauthorized('the bearer token is not a partner-admin token');
  if (record.expiresAt <= ctx.clock.now()) throw unauthorized('the bearer token has expired');
  const own = { clientId: record.clientId, ownCompanyId: record.companyId };
  const managedId = header(req, 'x-managed-company-id');
  if (managedId !== undefined && managedId !== '') {
    if (!mayManage(ctx, record.companyId, managedId)) {
      throw problem(403, `the caller does not manage company ${managedId}`);
    }
    return { ...own, companyId: managedId, onBehalfOf: true };
  }
  return { ...own, companyId: record.companyId, onBehalfOf: false };
}
