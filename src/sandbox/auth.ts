import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { SandboxContext } from './context.js';
import { type Caller, type HttpProblem, problem, readBody, type SandboxRequest, sendJson } from './http.js';
import { SEED } from './seed-ids.js';

/** The one client the sandbox issues: its credentials live in `credentials.json` of the state folder. */
export interface SandboxCredentials {
  clientId: string;
  clientSecret: string;
  apiKey: string;
}

export const TOKEN_LIFETIME_SECONDS = 3600;

export interface TokenRecord {
  id: string;
  clientId: string;
  companyId: string;
  expiresAt: number;
  [key: string]: unknown;
}

interface CompanyRecord {
  id: string;
  role?: string;
  technologyPartnerId?: string;
  managedCompanyIds?: string[];
  [key: string]: unknown;
}

export function newCredentials(): SandboxCredentials {
  return {
    clientId: `sandbox-client-${randomBytes(4).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
    apiKey: randomBytes(24).toString('base64url'),
  };
}

export function sameSecret(a: string, b: string): boolean {
  const x = createHash('sha256').update(a).digest();
  const y = createHash('sha256').update(b).digest();
  return timingSafeEqual(x, y);
}

/** Tokens are stored by their hash, so the database holds nothing a caller could replay. */
export function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function oauthError(res: ServerResponse, status: number, error: string): void {
  sendJson(res, status, { error }, { 'cache-control': 'no-store' });
}

/**
 * POST /oauth2/token: the client-credentials grant, form encoded. `tokenKind` keeps the tokens of
 * one interface from opening the other (Interface B's partner-admin tokens live apart).
 */
export function createTokenHandler(
  ctx: SandboxContext,
  credentials: Pick<SandboxCredentials, 'clientId' | 'clientSecret'>,
  tokenKind = 'token',
) {
  return async (req: SandboxRequest, res: ServerResponse): Promise<void> => {
    const type = req.raw.headers['content-type'] ?? '';
    if (!type.startsWith('application/x-www-form-urlencoded')) {
      oauthError(res, 400, 'invalid_request');
      return;
    }
    const form = new URLSearchParams((await readBody(req.raw, 64 * 1024)).toString('utf8'));
    if (form.get('grant_type') !== 'client_credentials') {
      oauthError(res, 400, 'unsupported_grant_type');
      return;
    }
    const clientId = form.get('client_id') ?? '';
    const clientSecret = form.get('client_secret') ?? '';
    if (!sameSecret(clientId, credentials.clientId) || !sameSecret(clientSecret, credentials.clientSecret)) {
      ctx.log.info({ route: req.route }, 'token refused: invalid client');
      oauthError(res, 401, 'invalid_client');
      return;
    }
    const token = randomBytes(32).toString('base64url');
    ctx.store.insert<TokenRecord>(tokenKind, {
      id: tokenKey(token),
      clientId,
      companyId: SEED.partnerCompanyId,
      expiresAt: ctx.clock.now() + TOKEN_LIFETIME_SECONDS * 1000,
    });
    ctx.log.debug({ clientId }, 'token issued');
    sendJson(
      res,
      200,
      { access_token: token, expires_in: TOKEN_LIFETIME_SECONDS, token_type: 'Bearer' },
      { 'cache-control': 'no-store' },
    );
  };
}

export function header(req: SandboxRequest, name: string): string | undefined {
  const value = req.raw.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Decisions, Authentication: only a TECHNOLOGY_PARTNER acts for a company, and only one it manages. */
export function mayManage(ctx: SandboxContext, ownCompanyId: string, managedId: string): boolean {
  const own = ctx.store.get<CompanyRecord>('company', ownCompanyId);
  if (own?.role !== 'TECHNOLOGY_PARTNER') return false;
  const managed = ctx.store.get<CompanyRecord>('company', managedId);
  if (!managed) return false;
  return (
    managed.technologyPartnerId === ownCompanyId || (own.managedCompanyIds?.includes(managedId) ?? false)
  );
}

/**
 * The header layers of Interface A, in order: API key (403), bearer token (401), then the
 * managed company the call is made for (403). Mutual TLS was already checked by the TLS handshake.
 */
export function authenticate(
  ctx: SandboxContext,
  credentials: SandboxCredentials,
  req: SandboxRequest,
): Caller {
  const apiKey = header(req, 'x-api-key');
  if (apiKey === undefined || !sameSecret(apiKey, credentials.apiKey)) {
    throw problem(403, 'the x-api-key header is missing or wrong');
  }
  const authorization = header(req, 'authorization') ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (!match?.[1]) throw unauthorized('the bearer token is missing');
  const record = ctx.store.get<TokenRecord>('token', tokenKey(match[1]));
  if (!record) throw unauthorized('the bearer token is not valid');
  if (record.expiresAt <= ctx.clock.now()) throw unauthorized('the bearer token has expired');
  const managedId = header(req, 'x-managed-company-id');
  if (managedId !== undefined && managedId !== '') {
    if (!mayManage(ctx, record.companyId, managedId)) {
      throw problem(403, `the caller does not manage company ${managedId}`);
    }
    return {
      clientId: record.clientId,
      companyId: managedId,
      ownCompanyId: record.companyId,
      onBehalfOf: true,
    };
  }
  return {
    clientId: record.clientId,
    companyId: record.companyId,
    ownCompanyId: record.companyId,
    onBehalfOf: false,
  };
}

export function unauthorized(detail: string): HttpProblem {
  const p = problem(401, detail);
  (p.headers as Record<string, string>)['www-authenticate'] = 'Bearer';
  return p;
}
