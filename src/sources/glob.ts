/**
 * Globs for include/exclude lists, through picomatch, with our rules on top: a glob matches in any
 * case unless asked (ERPs on Windows happily write `INVOICE.PDF`); `*` takes names starting with a
 * dot too (the default excludes leave them out with `.*`); parentheses and `|` are plain characters
 * (`invoice (1).pdf`), not regular-expression groups, and a leading `!` is a plain character, not a
 * negation; a glob that cannot be what was meant (unclosed `[` or `{`, a trailing backslash) is
 * refused when the configuration is read, as is one longer than picomatch reads (64 KiB).
 *
 * Supported: `*` (any run within a path segment), `?` (one character; a character beyond the
 * Basic Multilingual Plane, such as an emoji, counts as two), `[abc]`, `[a-z]`,
 * `[!abc]`, `{pdf,csv}`, `**` (any run of path segments: `**` alone in a segment crosses folders,
 * elsewhere it behaves like `*`). A backslash escapes the next character.
 */
import picomatch from 'picomatch';
import { DocexError } from '../core/errors.js';

export interface GlobOptions {
  /** Default false: `*.pdf` also takes `A.PDF`. */
  caseSensitive?: boolean;
}

/** The longest pattern picomatch reads (after our escapes): past it, it throws a plain SyntaxError. */
const MAX_GLOB_LENGTH = picomatch.constants.MAX_LENGTH;
/** A longer pattern is shown cut here in messages. */
const SHOWN_LENGTH = 100;

function invalid(pattern: string, why: string, cause?: unknown): DocexError {
  const shown = pattern.length > SHOWN_LENGTH ? `${pattern.slice(0, SHOWN_LENGTH)}…` : pattern;
  return new DocexError('DOCEX_SOURCE_GLOB_INVALID', `invalid glob "${shown}": ${why}`, {
    details: { pattern: shown },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * The pattern as picomatch reads it: refused when it cannot be what was meant, with `(`, `)` and
 * `|` escaped (picomatch would make them a group or an alternative), and the braces of a group of
 * one alternative (`*.{pdf}`) dropped: picomatch would take them as plain characters.
 */
function literalGroups(pattern: string): string {
  if (pattern.length === 0) throw invalid(pattern, 'empty pattern');
  let out = '';
  // The open brace groups: where each `{` is in `out`, and whether it has a `,` of its own yet.
  const groups: { at: number; alternatives: boolean }[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      if (i + 1 === pattern.length) throw invalid(pattern, 'trailing backslash');
      out += ch + pattern[i + 1];
      i++;
    } else if (ch === '[') {
      // A `]` right after `[` (or `[!`) is a member of the class.
      const first = pattern[i + 1] === '!' || pattern[i + 1] === '^' ? i + 2 : i + 1;
      const end = pattern.indexOf(']', first + 1);
      if (end < 0) throw invalid(pattern, 'unclosed [');
      out += pattern.slice(i, end + 1);
      i = end;
    } else if (ch === '(' || ch === ')' || ch === '|') {
      out += `\\${ch}`;
    } else if (ch === '{') {
      groups.push({ at: out.length, alternatives: false });
      out += ch;
    } else if (ch === ',' && groups.length > 0) {
      groups[groups.length - 1]!.alternatives = true;
      out += ch;
    } else if (ch === '}' && groups.length > 0) {
      const group = groups.pop()!;
      if (group.alternatives) out += ch;
      else out = out.slice(0, group.at) + out.slice(group.at + 1);
    } else {
      out += ch;
    }
  }
  if (groups.length > 0) throw invalid(pattern, 'unclosed {');
  if (out.length === 0) throw invalid(pattern, 'empty once its braces are read');
  return out;
}

export function compileGlob(pattern: string, options: GlobOptions = {}): RegExp {
  const literal = literalGroups(pattern);
  if (literal.length > MAX_GLOB_LENGTH) {
    throw invalid(
      pattern,
      `${pattern.length} characters${literal.length > pattern.length ? ` (${literal.length} with '(', ')' and '|' escaped)` : ''}: a glob has at most ${MAX_GLOB_LENGTH}`,
    );
  }
  let re: RegExp;
  try {
    re = picomatch.makeRe(literal, {
      dot: true,
      // `[!abc]` as a negated class.
      posix: true,
      noextglob: true,
      nonegate: true,
      windows: false,
      // Not `u`: picomatch escapes characters (`\-`) that a unicode-mode expression refuses.
      ...(options.caseSensitive ? {} : { nocase: true }),
    });
  } catch (err) {
    // picomatch throws plain errors (SyntaxError, RangeError): the configuration's code instead.
    throw invalid(pattern, `picomatch cannot read it (${err instanceof Error ? err.name : 'error'})`, err);
  }
  // picomatch answers an expression it could not build (a range such as [z-a]) with one that matches nothing.
  if (re.source === '$^') throw invalid(pattern, 'not a valid glob (a range such as [z-a]?)');
  // `s`: picomatch's `.` (in `**`, and the look-ahead of a leading `*`) takes a newline too, as any
  // other character of a name: such a file is taken and refused for its name, not left unseen.
  return re.flags.includes('s') ? re : new RegExp(re.source, `${re.flags}s`);
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
