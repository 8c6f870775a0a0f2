/**
 * Pre-signed URLs carry their signature in the query string (and sometimes the fragment). Any text
 * the journal stores or logs (rejection reasons come from errors) loses both first.
 */
import { REDACTED } from '../core/log-redact.js';

const URL_WITH_QUERY = /\b([a-z][a-z0-9+.-]*:\/\/[^\s?#"'<>]*)[?#][^\s"'<>]*/gi;

export function stripUrlQueries(text: string): string {
  return text.replace(URL_WITH_QUERY, `$1?${REDACTED}`);
}
