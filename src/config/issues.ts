/**
 * zod issues as the lines a person fixes a YAML file with: `folders[1].workflowId: Required`.
 */
import type { z } from 'zod';
import { formatConfigPath } from './substitute.js';

type Issue = z.core.$ZodIssue;

/** Per-parse error texts: a missing key says "Required" rather than "expected string, received undefined". */
export function configErrorText(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type' && issue.input === undefined) return 'Required';
  return undefined;
}

// A union fails as a whole; the useful line is the one from the branch whose type matched
// (`settleMs: "abc"` failed the duration pattern, not "expected number").
function unionText(issue: Extract<Issue, { code: 'invalid_union' }>): string {
  const branches = issue.errors ?? [];
  for (const branch of branches) {
    const specific = branch.find((inner) => inner.code !== 'invalid_type');
    if (specific) return specific.message;
  }
  const expected = branches
    .flat()
    .map((inner) => (inner.code === 'invalid_type' ? inner.expected : undefined))
    .filter((name): name is NonNullable<typeof name> => name !== undefined);
  return expected.length > 0 ? `expected ${[...new Set(expected)].join(' or ')}` : issue.message;
}

/** One line per problem, in document order of the issues. */
export function formatIssues(issues: readonly Issue[]): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) lines.push(`${formatConfigPath([...issue.path, key])}: unknown option`);
      continue;
    }
    const text = issue.code === 'invalid_union' ? unionText(issue) : issue.message;
    lines.push(`${formatConfigPath(issue.path)}: ${text}`);
  }
  return lines;
}
