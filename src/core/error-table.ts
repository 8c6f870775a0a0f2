/**
 * The error table of docs/errors.md, rendered from the code registry (core/error-codes.ts) between
 * two markers; the prose around it is the page's own. `npm run errors:generate` writes it,
 * `npm run errors:check` (CI) fails when the page differs from what the registry renders.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import {
  API_STATUS_CODE,
  ERROR_CODES,
  ERROR_GROUPS,
  ERROR_OUTCOMES,
  type ErrorCodeInfo,
  type ErrorGroup,
  type ErrorOutcome,
} from './error-codes.js';

export const BEGIN_MARKER =
  '<!-- error-codes:begin. Generated from src/core/error-codes.ts by `npm run errors:generate`; do not edit by hand. -->';
export const END_MARKER = '<!-- error-codes:end -->';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function row(name: string, info: ErrorCodeInfo): string {
  return `| \`${name}\` | ${info.outcome} | ${cell(info.meaning)} | ${cell(info.action)} |`;
}

function groupTable(group: ErrorGroup): string[] {
  const { title, intro } = ERROR_GROUPS[group];
  const rows = Object.entries(ERROR_CODES)
    .filter(([, info]) => info.group === group)
    .map(([code, info]) => row(code, info));
  if (API_STATUS_CODE.group === group) rows.unshift(row(API_STATUS_CODE.name, API_STATUS_CODE));
  return [
    title,
    '',
    ...(intro ? [intro, ''] : []),
    '| code | outcome | meaning | what to do |',
    '|---|---|---|---|',
    ...rows,
  ];
}

/** What each outcome of the tables means. */
function outcomeTable(): string[] {
  const outcomes = Object.entries(ERROR_OUTCOMES) as [ErrorOutcome, string][];
  return [
    '**Outcomes** (what happens next; the agent acts on it)',
    '',
    '| outcome | what happens next |',
    '|---|---|',
    ...outcomes.map(([outcome, text]) => `| ${outcome} | ${cell(text)} |`),
  ];
}

/** The outcomes, then the tables of every group in the order of ERROR_GROUPS, between the markers. */
export function renderErrorTable(): string {
  const groups = Object.keys(ERROR_GROUPS) as ErrorGroup[];
  const body = [outcomeTable(), ...groups.map(groupTable)].flatMap((table, i) => [
    ...(i > 0 ? [''] : []),
    ...table,
  ]);
  return [BEGIN_MARKER, '', ...body, '', END_MARKER].join('\n');
}

/** The page with its table replaced by the rendered one. Throws when a marker is missing. */
export function withErrorTable(page: string): string {
  const begin = page.indexOf(BEGIN_MARKER);
  const end = page.indexOf(END_MARKER);
  if (begin === -1 || end < begin) {
    throw new Error(`the page has no "${BEGIN_MARKER}" … "${END_MARKER}" block`);
  }
  return page.slice(0, begin) + renderErrorTable() + page.slice(end + END_MARKER.length);
}

/** True when the page at `file` holds what the registry renders. */
export function errorTableIsCurrent(file: string): boolean {
  const page = readFileSync(file, 'utf8');
  return withErrorTable(page) === page;
}

export function writeErrorTable(file: string): void {
  writeFileSync(file, withErrorTable(readFileSync(file, 'utf8')));
}
