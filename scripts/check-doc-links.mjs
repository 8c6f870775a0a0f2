#!/usr/bin/env node
// Checks every relative link of README.md, docs/*.md and systemd/README.md: the file exists and,
// when the link has a #anchor into a Markdown file, a heading of that file has that anchor
// (GitHub's rule: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats).
// Usage: node scripts/check-doc-links.mjs   (exit 1 and one line per broken link)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pages = [
  'README.md',
  'systemd/README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside fenced code blocks, line by line (links and headings in code do not count). */
function proseLines(text) {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

function anchorsOf(file) {
  const seen = new Map();
  const anchors = new Set();
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

const broken = [];
let checked = 0;
for (const page of pages) {
  const lines = proseLines(readFileSync(path.join(root, page), 'utf8'));
  for (const line of lines) {
    // Inline code may hold brackets that are not links.
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, file:
      checked++;
      const [file, anchor] = target.split('#');
      const resolved = file ? path.resolve(root, path.dirname(page), file) : path.join(root, page);
      if (!existsSync(resolved)) {
        broken.push(`${page}: ${target}: no such file`);
      } else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${page}: ${target}: no heading with that anchor`);
      }
    }
  }
}

for (const line of broken) console.log(line);
console.log(`${checked} relative links in ${pages.length} pages, ${broken.length} broken`);
process.exit(broken.length === 0 ? 0 : 1);
