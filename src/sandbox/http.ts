import type { IncomingMessage, ServerResponse } from 'node:http';

/** A problem the sandbox answers as RFC 9457 application/problem+json. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
    readonly errors?: { field: string; message: string }[],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? title);
  }
}

/** Who is calling, after the auth layers: the token's company, or the managed company it acts for. */
export interface Caller {
  clientId: string;
  /** The company the call is made for (x-managed-company-id when given, else the caller's own). */
  companyId: string;
  /** The company the credentials belong to. */
  ownCompanyId: string;
  onBehalfOf: boolean;
}

export interface SandboxRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  raw: IncomingMessage;
  caller: Caller | undefined;
  /** The route pattern that matched, e.g. `/jobs/:id` (faults and metrics key on it). */
  route: string;
}

export type Handler = (req: SandboxRequest, res: ServerResponse) => unknown | Promise<unknown>;

interface Route {
  method: string;
  pattern: string;
  regex: RegExp;
  keys: string[];
  handler: Handler;
}

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    const keys: string[] = [];
    const source = pattern
      .split('/')
      .map((part) => {
        if (part.startsWith(':')) {
          keys.push(part.slice(1));
          return '([^/]+)';
        }
        return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    this.routes.push({ method, pattern, regex: new RegExp(`^${source}$`), keys, handler });
    return this;
  }

  /** Finds the route; a path that exists with another method answers 405. */
  match(method: string, path: string): { route: Route; params: Record<string, string> } | undefined {
    let pathExists = false;
    for (const route of this.routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      pathExists = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      route.keys.forEach((key, i) => {
        params[key] = decodeParam(m[i + 1] ?? '');
      });
      return { route, params };
    }
    if (pathExists) throw new HttpProblem(405, 'Method Not Allowed', `${method} is not allowed on ${path}`);
    return undefined;
  }
}

function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpProblem(400, 'Bad Request', 'malformed percent-encoding in the request path');
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = {
    type: 'about:blank',
    title: problem.title,
    status: problem.status,
    ...(problem.detail ? { detail: problem.detail } : {}),
    ...(problem.errors ? { errors: problem.errors } : {}),
  };
  const text = JSON.stringify(body);
  res.writeHead(problem.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(text),
    ...problem.headers,
  });
  res.end(text);
}

export const STATUS_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  411: 'Length Required',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function problem(
  status: number,
  detail?: string,
  errors?: { field: string; message: string }[],
): HttpProblem {
  return new HttpProblem(status, STATUS_TITLES[status] ?? 'Error', detail, errors);
}

export async function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw problem(413, `request body over ${limitBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Reads a JSON body; a malformed one is a 400 with the parser's reason. */
export async function readJson(req: IncomingMessage, limitBytes = 1024 * 1024): Promise<unknown> {
  const body = await readBody(req, limitBytes);
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw problem(400, `body is not valid JSON: ${(err as Error).message}`);
  }
}

/** maxItems: 1..1000, default 100; anything else is 400 (decisions, Wire conventions). */
export function parseMaxItems(query: URLSearchParams): number {
  const raw = query.get('maxItems');
  if (raw === null) return 100;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw problem(400, 'maxItems must be an integer from 1 to 1000');
  return n;
}
