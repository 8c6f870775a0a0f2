/**
 * Whether one route's glob takes every name another's can: then the later route can never match.
 * Pure and conservative: it answers true only when it can prove it, for globs of plain
 * characters, `*`, `?` and a route's `{company}` token (any case, as routes match); a glob with a
 * class, a group, an escape or `**` is never judged covered (the answer is false, not a guess).
 */

type Token = { kind: 'char'; ch: string } | { kind: 'one' } | { kind: 'any' };

const UNSUPPORTED = /[[\]{}\\]|\*\*/;
/** Longer globs are not judged (the check is quadratic in their lengths). */
const MAX_TOKENS = 512;
const COMPANY_TOKEN = '{company}';

/**
 * The glob's tokens; `{company}` stands for one character or more (the part a company name
 * fills: an earlier route takes every name of that shape, routing or refusing it). Undefined for
 * a glob this module does not judge.
 */
function tokens(glob: string): Token[] | undefined {
  const parts = glob.split(COMPANY_TOKEN);
  if (parts.some((part) => UNSUPPORTED.test(part))) return undefined;
  const out: Token[] = [];
  for (const [i, part] of parts.entries()) {
    if (i > 0) out.push({ kind: 'one' }, { kind: 'any' });
    // By UTF-16 unit, as `?` counts them (a character beyond the BMP is two).
    for (let k = 0; k < part.length; k++) {
      const ch = part[k]!;
      if (ch === '*') out.push({ kind: 'any' });
      else if (ch === '?') out.push({ kind: 'one' });
      else out.push({ kind: 'char', ch: ch.toLowerCase() });
    }
  }
  return out;
}

/**
 * True when every name `later` matches is matched by `earlier` (so a route of `later` after one of
 * `earlier` is never reached). Each token of `later` is taken by a token of `earlier` in one
 * alignment: a `*` of `earlier` takes any run of them (not a `/`), a `?` one character or `?`, a
 * character the same character.
 */
export function globCovers(earlier: string, later: string): boolean {
  const q = tokens(earlier);
  const p = tokens(later);
  if (!q || !p || q.length > MAX_TOKENS || p.length > MAX_TOKENS) return false;
  const memo = new Map<number, boolean>();
  const covered = (i: number, j: number): boolean => {
    const key = i * (q.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    const want = p[i];
    const have = q[j];
    if (have === undefined) result = want === undefined;
    else if (have.kind === 'any') {
      result =
        covered(i, j + 1) ||
        (want !== undefined && !(want.kind === 'char' && want.ch === '/') && covered(i + 1, j));
    } else if (have.kind === 'one') {
      result =
        want !== undefined &&
        (want.kind === 'one' || (want.kind === 'char' && want.ch !== '/')) &&
        covered(i + 1, j + 1);
    } else {
      result = want?.kind === 'char' && want.ch === have.ch && covered(i + 1, j + 1);
    }
    memo.set(key, result);
    return result;
  };
  return covered(0, 0);
}
