/** What an answer says: its JSON, its problem details, and the error a non-2xx answer means. */
import type { IncomingHttpHeaders } from 'node:http';
import type { ErrorCode } from '../core/error-codes.js';
import { problemSchema } from '../domain/wire.js';
import { type ApiProblem, httpError, redactProblem, redactSecrets } from './errors.js';
import { parseRetryAfter } from './retry.js';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export function parseJsonText(text: string): unknown {
  if (text.trim() === '') return undefined;
  return JSON.parse(text);
}

const problemItemSchema = problemSchema.shape.errors.unwrap().element;

/**
 * Problem details from an error body, when it is JSON (RFC 9457 or an OAuth error). Each field is
 * read on its own with the wire schema, so one odd field does not lose the others.
 */
export function problemFromText(text: string): ApiProblem | undefined {
  let json: unknown;
  try {
    json = parseJsonText(text);
  } catch {
    return undefined;
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  const { title: titleSchema, detail: detailSchema } = problemSchema.shape;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const title = titleSchema.safeParse(body['title']).data ?? str(body['error']);
  const detail =
    detailSchema.safeParse(body['detail']).data ?? str(body['error_description']) ?? str(body['message']);
  const errors = Array.isArray(body['errors'])
    ? body['errors'].map((item: unknown) => {
        const parsed = problemItemSchema.safeParse(item);
        if (parsed.success) {
          const { field, message } = parsed.data;
          return { ...(field === undefined ? {} : { field }), message };
        }
        return { message: JSON.stringify(item) };
      })
    : undefined;
  return {
    ...(title === undefined ? {} : { title }),
    ...(detail === undefined ? {} : { detail }),
    ...(errors === undefined ? {} : { errors }),
  };
}

/**
 * The ApiError for a non-2xx answer. `secrets` (API key, token, client secret) are redacted from
 * what the answer says, in case the server echoes the request.
 */
export function answerError(
  answer: RawAnswer,
  method: string,
  route: string,
  nowMs: number,
  code?: ErrorCode,
  secrets: readonly string[] = [],
) {
  const parsed = problemFromText(answer.text);
  const problem = parsed === undefined ? undefined : redactProblem(parsed, secrets);
  const retryAfterMs = parseRetryAfter(answer.headers['retry-after'], nowMs);
  return httpError(
    {
      status: answer.status,
      method,
      route,
      ...(problem ? { problem } : { text: redactSecrets(answer.text, secrets) }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
    code,
  );
}
