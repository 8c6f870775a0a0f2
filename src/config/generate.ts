/**
 * Generates config/agent.schema.json and config/agent.example.yaml from the zod schema, so the
 * documentation cannot drift from what the loader accepts (a test compares them). The example is
 * rendered from the JSON Schema: descriptions become comments, defaults and examples values.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { z } from 'zod';
import { agentConfigSchema } from './schema.js';

interface JsonNode {
  type?: string;
  description?: string;
  default?: unknown;
  examples?: unknown[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonNode>;
  required?: string[];
  items?: JsonNode;
  oneOf?: JsonNode[];
}

export const SCHEMA_FILE = 'agent.schema.json';
export const EXAMPLE_FILE = 'agent.example.yaml';
const WIDTH = 100;
const GENERATOR = 'npx tsx src/config/generate-cli.ts';
// Optional only because the sandbox can stand in for it; a real deployment fills it in.
const SHOWN_OPTIONAL = new Set(['service']);

export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(agentConfigSchema, { io: 'input', target: 'draft-07' }) as Record<string, unknown>;
}

export function renderJsonSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

function yamlValue(value: unknown): string {
  return stringify(value, { collectionStyle: 'flow', flowCollectionPadding: false, lineWidth: 0 }).trimEnd();
}

function commentLines(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && indent.length + 2 + line.length + 1 + word.length > WIDTH) {
      lines.push(`${indent}# ${line}`);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(`${indent}# ${line}`);
  return lines;
}

/** Turns rendered lines into comments at one column, so removing `# ` there restores valid YAML. */
function commentOut(lines: string[], indent: string): string[] {
  return lines.map((line) => `${indent}# ${line.slice(indent.length)}`);
}

function describe(node: JsonNode): string {
  const parts = [node.description ?? ''];
  if (node.enum && node.enum.length > 1)
    parts.push(`One of: ${node.enum.map((v) => yamlValue(v)).join(', ')}.`);
  return parts.join(' ').trim();
}

function discriminator(variant: JsonNode): [string, unknown] | undefined {
  const entry = Object.entries(variant.properties ?? {}).find(([, prop]) => prop.const !== undefined);
  return entry && [entry[0], entry[1].const];
}

function pickVariant(node: JsonNode): JsonNode {
  const variants = node.oneOf ?? [];
  const wanted = node.default as Record<string, unknown> | undefined;
  const match = variants.find((v) => {
    const d = discriminator(v);
    return d !== undefined && wanted?.[d[0]] === d[1];
  });
  return match ?? (variants[0] as JsonNode);
}

/** Shows a union's default (e.g. an output target's default folder) instead of the variant's examples. */
function withDefaultValues(variant: JsonNode, defaults: unknown): JsonNode {
  if (!defaults || typeof defaults !== 'object') return variant;
  const values = defaults as Record<string, unknown>;
  const properties = Object.fromEntries(
    Object.entries(variant.properties ?? {}).map(([k, p]) => [
      k,
      k in values ? { ...p, examples: [values[k]] } : p,
    ]),
  );
  return { ...variant, properties };
}

// `inComment`: the lines will be commented out as a whole, so optional parts are not commented again.
function renderObjectBody(node: JsonNode, indent: string, inComment: boolean): string[] {
  const required = new Set(node.required ?? []);
  return Object.entries(node.properties ?? {}).flatMap(([key, prop]) =>
    renderProperty(key, prop, required.has(key) || inComment, indent, inComment),
  );
}

function renderProperty(
  key: string,
  prop: JsonNode,
  required: boolean,
  indent: string,
  inComment = false,
): string[] {
  const inner = `${indent}  `;
  const lines = commentLines(describe(prop), indent);
  if (prop.oneOf) {
    const picked = pickVariant(prop);
    const chosen = withDefaultValues(picked, prop.default);
    lines.push(
      `${indent}${key}:`,
      ...commentLines(chosen.description ?? '', inner),
      ...renderObjectBody(chosen, inner, inComment),
    );
    for (const other of prop.oneOf.filter((v) => v !== picked)) {
      lines.push(...commentLines(`Or: ${other.description ?? ''}`, indent));
      lines.push(...commentOut([`${indent}${key}:`, ...renderObjectBody(other, inner, true)], indent));
    }
    return lines;
  }
  if (prop.type === 'object' && prop.properties) {
    const shown = required || prop.default !== undefined || (indent === '' && SHOWN_OPTIONAL.has(key));
    const block = [`${indent}${key}:`, ...renderObjectBody(prop, inner, inComment || !shown)];
    return [...lines, ...(shown ? block : commentOut(block, indent))];
  }
  if (prop.type === 'array' && prop.items?.type === 'object') {
    // A nested optional list without a default (a folder's routes) is shown commented out, as an
    // object is; a top-level list (folders) always shows its first entry.
    const shown = required || prop.default !== undefined || indent === '';
    const item = renderObjectBody(prop.items, `${inner}  `, inComment || !shown);
    const first = item.findIndex((line) => !line.trimStart().startsWith('#'));
    const head = item.slice(0, first).map((line) => line.slice(2));
    const entry = `${inner}- ${(item[first] ?? '').trimStart()}`;
    const block = [
      `${indent}${key}:`,
      ...commentLines(prop.items.description ?? '', inner),
      ...head,
      entry,
      ...item.slice(first + 1),
    ];
    return [...lines, ...(shown ? block : commentOut(block, indent))];
  }
  const value = prop.examples?.[0] ?? prop.default ?? prop.const;
  const line = `${indent}${key}: ${value === undefined ? '' : yamlValue(value)}`.trimEnd();
  const shown = required || prop.default !== undefined;
  return [...lines, shown ? line : `${indent}# ${line.slice(indent.length)}`];
}

export function renderExampleYaml(): string {
  const root = configJsonSchema() as JsonNode & { title?: string };
  const lines = [
    `# yaml-language-server: $schema=./${SCHEMA_FILE}`,
    `# ${root.title ?? 'docex-agent configuration'}: every option, its default and what it does.`,
    `# Generated from src/config/schema.ts by \`${GENERATOR}\`; do not edit by hand.`,
    '# Lines starting with "# key:" are optional settings shown with an example value.',
    ...commentLines(root.description ?? '', ''),
    '',
  ];
  const required = new Set(root.required ?? []);
  const entries = Object.entries(root.properties ?? {});
  entries.forEach(([key, prop], i) => {
    lines.push(...renderProperty(key, prop, required.has(key), ''));
    if (i < entries.length - 1) lines.push('');
  });
  return `${lines.join('\n')}\n`;
}

export interface GeneratedFile {
  file: string;
  content: string;
}

/** The generated files of `configDir`, with their expected content. */
export function generatedFiles(configDir: string): GeneratedFile[] {
  return [
    { file: path.join(configDir, SCHEMA_FILE), content: renderJsonSchema() },
    { file: path.join(configDir, EXAMPLE_FILE), content: renderExampleYaml() },
  ];
}

/** Writes both generated files; returns their paths. */
export function writeGeneratedFiles(configDir: string): string[] {
  mkdirSync(configDir, { recursive: true });
  return generatedFiles(configDir).map(({ file, content }) => {
    writeFileSync(file, content);
    return file;
  });
}

/** Paths of generated files that are missing or differ from what the schema generates. */
export function staleGeneratedFiles(configDir: string): string[] {
  return generatedFiles(configDir)
    .filter(({ file, content }) => {
      try {
        return readFileSync(file, 'utf8') !== content;
      } catch {
        return true;
      }
    })
    .map(({ file }) => file);
}
