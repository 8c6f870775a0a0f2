/**
 * File-name globs for include/exclude lists. Our own small matcher because `path.matchesGlob`
 * prints an ExperimentalWarning on Node 20 and is case-sensitive only, while ERPs on Windows
 * happily write `INVOICE.PDF`. Globs match one file name (no folders: sources watch depth 0).
 *
 * Supported: `*` (any run), `?` (one character), `[abc]`, `[a-z]`, `[!abc]`, `{pdf,csv}`.
 * `**` behaves like `*`. A backslash escapes the next character.
 */
import { DocexError } from '../core/errors.js';

export interface GlobOptions {
  /** Default false: `*.pdf` also takes `A.PDF`. */
  caseSensitive?: boolean;
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/]/;

function escapeChar(ch: string): string {
  return REGEX_SPECIAL.test(ch) ? '\\' + ch : ch;
}

function invalid(pattern: string, why: string): DocexError {
  return new DocexError('DOCEX_SOURCE_GLOB_INVALID', `invalid glob "${pattern}": ${why}`, {
    details: { pattern },
  });
}

/** Translates a glob to the body of a regular expression (no anchors). */
function translate(pattern: string): string {
  let out = '';
  let braceDepth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) throw invalid(pattern, 'trailing backslash');
      out += escapeChar(next);
      i++;
    } else if (ch === '*') {
      while (pattern[i + 1] === '*') i++;
      // `[^]` so names with newlines still match.
      out += '[^]*';
    } else if (ch === '?') {
      out += '[^]';
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) throw invalid(pattern, 'unclosed [');
      let body = pattern.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      const cls = [...body].map((c) =>
        c === '-' ? '-' : c === ']' || c === '\\' || c === '^' ? '\\' + c : c,
      );
      out += (negate ? '[^' : '[') + cls.join('') + ']';
      i = end;
    } else if (ch === '{') {
      braceDepth++;
      out += '(?:';
    } else if (ch === '}' && braceDepth > 0) {
      braceDepth--;
      out += ')';
    } else if (ch === ',' && braceDepth > 0) {
      out += '|';
    } else {
      out += escapeChar(ch);
    }
  }
  if (braceDepth > 0) throw invalid(pattern, 'unclosed {');
  return out;
}

export function compileGlob(pattern: string, options: GlobOptions = {}): RegExp {
  if (pattern.length === 0) throw invalid(pattern, 'empty pattern');
  return new RegExp('^' + translate(pattern) + '$', options.caseSensitive ? 'u' : 'iu');
}

export function matchesGlob(name: string, pattern: string, options: GlobOptions = {}): boolean {
  return compileGlob(pattern, options).test(name);
}

export interface NameFilterOptions extends GlobOptions {
  /** Empty or absent: every name is included. */
  include?: readonly string[] | undefined;
  exclude?: readonly string[] | undefined;
}

/** Compiles include/exclude once; exclude wins over include. Throws on an invalid glob at config time. */
export function createNameFilter(options: NameFilterOptions): (name: string) => boolean {
  const include = (options.include ?? []).map((p) => compileGlob(p, options));
  const exclude = (options.exclude ?? []).map((p) => compileGlob(p, options));
  return (name) => {
    if (exclude.some((re) => re.test(name))) return false;
    return include.length === 0 || include.some((re) => re.test(name));
  };
}
