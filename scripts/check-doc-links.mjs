#!/usr/bin/env node
// Checks every relative link of README.md, docs/*.md and systemd/README.md:
// - the file exists, inside the repository: a link that leaves it (../shared/…) fails, the
//   repository's pages must stand alone;
// - when the link has a #anchor into a Markdown file, a heading of that file has that anchor
//   (GitHub's rule: lower case, punctuation dropped, spaces to hyphens, -1, -2 for repeats);
// - in the package as `npm pack` packs it, every relative link of a packed page names a packed
//   file: the installed README and its pages link to nothing the package lacks.
// Usage: node scripts/check-doc-links.mjs [root]   (root: the repository, by default this
// script's; exit 1 and one line per broken link)
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const docsDir = path.join(root, 'docs');
const pages = [
  'README.md',
  'systemd/README.md',
  ...(existsSync(docsDir) ? readdirSync(docsDir) : [])
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
].filter((page) => existsSync(path.join(root, page)));

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

/** Every relative link of a page: its target as written, and the file it names (relative to root). */
function relativeLinks(page) {
  const links = [];
  for (const line of proseLines(readFileSync(path.join(root, page), 'utf8'))) {
    // Inline code may hold brackets that are not links.
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, file:
      const [file, anchor] = target.split('#');
      const resolved = file ? path.resolve(root, path.dirname(page), file) : path.join(root, page);
      links.push({ target, anchor, resolved, inRoot: path.relative(root, resolved) });
    }
  }
  return links;
}

const leavesRoot = (relative) => relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);

const broken = [];
let checked = 0;
for (const page of pages) {
  for (const { target, anchor, resolved, inRoot } of relativeLinks(page)) {
    checked++;
    if (leavesRoot(inRoot)) {
      broken.push(`${page}: ${target}: leaves the repository (its pages must stand alone)`);
    } else if (!existsSync(resolved)) {
      broken.push(`${page}: ${target}: no such file`);
    } else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
      broken.push(`${page}: ${target}: no heading with that anchor`);
    }
  }
}

/** What `npm pack` would pack (package.json's `files`, README, LICENSE), without building it. */
function packedFiles() {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [report] = JSON.parse(out.slice(out.indexOf('[')));
  return new Set(report.files.map((f) => f.path));
}

let packedPages = 0;
if (existsSync(path.join(root, 'package.json'))) {
  const packed = packedFiles();
  const isPacked = (relative) => {
    const posix = relative.split(path.sep).join('/');
    return packed.has(posix) || [...packed].some((f) => f.startsWith(`${posix}/`));
  };
  for (const page of pages.filter((p) => packed.has(p))) {
    packedPages++;
    for (const { target, inRoot } of relativeLinks(page)) {
      if (!leavesRoot(inRoot) && !isPacked(inRoot)) {
        broken.push(`${page}: ${target}: not in the package (package.json "files")`);
      }
    }
  }
}

for (const line of broken) console.log(line);
console.log(
  `${checked} relative links in ${pages.length} pages (${packedPages} of them packed), ${broken.length} broken`,
);
process.exit(broken.length === 0 ? 0 : 1);
