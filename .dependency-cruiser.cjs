/**
 * The architecture on one page: which folder of src/ may import which. Imports point one way, from
 * the edges (cli, ops) to the small pure cores (domain, core); the sandbox stands beside the agent
 * and shares only core and domain. docs/architecture.md says what each folder does.
 *
 *   cli, ops  ->  agent  ->  returns, pipeline  ->  sources, outputs  ->  sftp  ->  config  ->  api, journal  ->  domain  ->  core
 *   sandbox   ->  domain, core
 *
 * `npm run deps` checks it (CI runs it beside the linter).
 */
const layers = [
  ['cli', 'ops'],
  ['agent'],
  ['returns', 'pipeline'],
  ['sources', 'outputs'],
  // The SFTP transport, shared by the SFTP drop folders and output targets; it reads its key file
  // through config (the secret file rules), so it sits above it.
  ['sftp'],
  ['config'],
  ['api', 'journal'],
  ['domain'],
  ['core'],
];

/**
 * The kinds of source (sources/kind.ts, the registry sources/kinds.ts, each sources/<kind>/kind.ts):
 * the configuration parses them, so they sit with config, below the sources' I/O.
 */
const sourceKinds = '^src/sources/(kinds?|[^/]+/kind)\\.ts$';

const rank = new Map(layers.flatMap((folders, i) => folders.map((f) => [f, i])));
const all = [...rank.keys(), 'sandbox'];

/** A folder may import only folders of lower layers (and its own). */
const layerRules = [...rank.entries()].map(([folder, i]) => {
  const allowed = [...rank.entries()].filter(([, j]) => j > i).map(([f]) => f);
  const forbidden = all.filter((f) => f !== folder && !allowed.includes(f));
  return {
    name: `layer-${folder}`,
    severity: 'error',
    comment: `${folder}/ may import only ${allowed.join(', ') || 'nothing else in src/'}`,
    from: { path: `^src/${folder}/` },
    to: { path: `^src/(${forbidden.join('|')})/`, ...(folder === 'config' ? { pathNot: sourceKinds } : {}) },
  };
});

module.exports = {
  forbidden: [
    ...layerRules.filter((rule) => !rule.name.endsWith('-cli') && !rule.name.endsWith('-ops')),
    {
      name: 'layer-ops',
      severity: 'error',
      comment: 'ops/ (health, metrics, status) sees the agent, never the cli',
      from: { path: '^src/ops/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'source-kinds-pure',
      severity: 'error',
      comment:
        'a kind of source is declared with config (its schema, paths, capabilities): it imports config and below, never the sources it describes',
      from: { path: sourceKinds },
      to: {
        path: `^src/(${all.filter((f) => (rank.get(f) ?? 0) < (rank.get('config') ?? 0) || f === 'sandbox').join('|')})/`,
        pathNot: sourceKinds,
      },
    },
    {
      name: 'sandbox-beside',
      severity: 'error',
      comment: 'the sandbox emulates the service: it shares only domain and core with the agent',
      from: { path: '^src/sandbox/' },
      to: { path: `^src/(${all.filter((f) => !['sandbox', 'domain', 'core'].includes(f)).join('|')})/` },
    },
    {
      name: 'sandbox-from-cli-only',
      severity: 'error',
      comment: 'only the command line starts the built-in sandbox',
      from: { path: '^src/', pathNot: '^src/(cli|sandbox)/' },
      to: { path: '^src/sandbox/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'no import circles, inside a folder either',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'one-owner-per-store',
      severity: 'error',
      comment:
        'each SQLite file has one owner that runs SQL on it (the journal, the returns store and its reader, the inbox, the sandbox); others use its API',
      from: {
        path: '^src/',
        pathNot:
          '^src/(core/|journal/|returns/(sqlite-store|store-schema|sqlite-store-reader|sqlite-inbox-store)\\.ts$|sandbox/store\\.ts$)',
      },
      to: { path: '^src/core/sqlite\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    // TypeScript 7 has no JS compiler API yet: swc parses the sources (type-only imports included).
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default'],
    },
  },
};
