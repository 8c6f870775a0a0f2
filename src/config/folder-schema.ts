/**
 * One drop folder: where files appear, which workflow they go to and how the agent handles them.
 * Every default of a folder lives here; the descriptions become the example file's comments.
 */
import { z } from 'zod';
import { kindOf, SOURCE_KINDS, SOURCE_SCHEMAS, type SourceConfig } from '../sources/kinds.js';
import { globCovers } from './glob-cover.js';
import { count, countOrOff, durationMs, flag, pathText, rateOrOff, retention } from './schema-types.js';
import { sendAtSchema, sendWindowSchema } from './send-schedule-schema.js';

export const FOLDER_MODES = ['single-file', 'payload-pdf', 'payload-word'] as const;
/** The order a folder takes its complete files in (sources/scan-order.ts applies it). */
const SCAN_ORDERS = ['mtime', 'name'] as const;

/** Temporary and hidden names that copy tools and editors leave while a file is being written. */
export const DEFAULT_EXCLUDES = [
  '.*',
  '~$*',
  '*.tmp',
  '*.temp',
  '*.part',
  '*.partial',
  '*.filepart',
  '*.crdownload',
];

// Built from the registry of kinds of source (sources/kinds.ts): a new kind joins there.
export const sourceSchema = z
  .discriminatedUnion('type', SOURCE_SCHEMAS)
  .describe(
    `Where the files come from: type ${SOURCE_KINDS.map((kind) => `${kind.type} (${kind.label})`).join(' or ')}.`,
  );

export const stabilitySchema = z
  .discriminatedUnion('kind', [
    z
      .strictObject({
        kind: z.literal('settle'),
        settleMs: durationMs(2000).describe(
          'How long size and modification time must stay unchanged between two observations.',
        ),
      })
      .describe(
        'A file is complete once two observations settleMs apart see the same size and modification time (the age of the file alone is not trusted: copies keep the old mtime).',
      ),
    z
      .strictObject({
        kind: z.literal('done-marker'),
        suffixes: z
          .array(z.string().regex(/^\.[^/\\]+$/, 'expected a suffix such as .done'))
          .min(1)
          .default(['.done', '.ready'])
          .describe('Marker suffixes: invoice.pdf is complete once invoice.pdf.done (or .ready) exists.'),
      })
      .describe('The producer writes a marker file once the data file is complete.'),
    z
      .strictObject({ kind: z.literal('rename-in') })
      .describe(
        'The producer writes under an excluded temporary name and renames the file into place: a file is complete as soon as it appears.',
      ),
  ])
  .prefault({ kind: 'settle' })
  .describe('How the agent decides that a file is complete: settle, done-marker or rename-in.');

const mappingSchema = z
  .strictObject({
    csv: z
      .strictObject({
        delimiter: z
          .enum(['auto', ',', ';', '\t', '|'])
          .default('auto')
          .describe('Column separator; auto detects it from the header line.'),
        columns: z
          .record(z.string().min(1), z.string().min(1))
          .default({})
          .describe('Renames: column header in the file -> column name the agent reads.')
          .meta({ examples: [{ Klantnummer: 'customerId', 'E-mail': 'email' }] }),
      })
      .optional()
      .describe('How rows of a CSV file become payloads.'),
    xml: z
      .strictObject({
        recordPath: z
          .string()
          .min(1)
          .describe('Path of the repeated element that holds one record.')
          .meta({ examples: ['Letters/Letter'] }),
        fields: z
          .record(z.string().min(1), z.string().min(1))
          .default({})
          .describe('Element path inside a record -> column name the agent reads.')
          .meta({ examples: [{ 'Customer/Email': 'email' }] }),
      })
      .optional()
      .describe('How records of an XML file become payloads.'),
  })
  .describe('Payload folders only: how CSV columns or XML elements map to payload fields.');

const payloadPdfSchema = z
  .strictObject({
    pairing: z
      .enum(['sidecar', 'index-csv'])
      .default('sidecar')
      .describe(
        'sidecar: each PDF comes with a payload file of the same base name (letter.pdf + letter.json). index-csv: an index file dropped with the PDFs lists a row per PDF; the PDFs wait in .processing until an index names them. Either way a ZIP holding PDFs and an index.csv is taken as one batch.',
      ),
    sidecarExtension: z
      .string()
      .regex(/^\.[^/\\]+$/, 'expected an extension such as .json')
      .default('.json')
      .describe('Extension of the sidecar payload file.'),
    indexFile: z
      .string()
      .regex(/^[^/\\]+$/, 'expected a file name, not a path')
      .default('index.csv')
      .describe(
        'Name of the index file inside the folder (pairing index-csv); its file column names each PDF. Inside a ZIP batch the index is always index.csv.',
      ),
  })
  .prefault({})
  .describe('payload-pdf folders only: how each PDF finds its payload.');

const routeSchema = z
  .strictObject({
    match: z
      .string()
      .min(1)
      .describe(
        "Glob of the relative paths this route takes (the file name in a flat folder; acme/invoices/*.pdf or */reminders/*.csv in a recursive one: * stays within one folder, ** crosses folders), with the folder's case rule (any case). It may hold one {company} token standing for a part of one path segment (a sub-folder's name: {company}/*.pdf), looked up in the folder's companies table: of the parts that fit, the longest known company (acme-be-x.pdf under {company}-*.pdf is acme-be's when both acme and acme-be are known); when none is known, the file is refused naming the shortest part.",
      )
      .meta({ examples: ['*-credit.xml', '{company}-*.pdf', '{company}/invoices/*.pdf'] }),
    workflowId: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Workflow the files of this route are sent to. A {company} route sends each company's files to the workflow its entry of the companies table names, and to this one for the entries that name none: it may go without one when every entry names its own.",
      )
      .meta({ examples: ['wf_ubl_peppol'] }),
    managedCompanyId: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Send them as this managed company; default the folder's managedCompanyId (a {company} route takes the company's id from the companies table instead).",
      )
      .meta({ examples: ['cmp_managed'] }),
    mode: z
      .enum(FOLDER_MODES)
      .optional()
      .describe(
        "How the files of this route are sent: single-file (each file one job: a PDF, a ZIP, a data file or UBL) or payload-word (each row of a CSV, JSON or XML file one job); default the folder's mode. payload-pdf is the folder's mode only: it pairs files across the folder (a PDF and its sidecar, an index naming PDFs), so no route can take some files of the folder into it. The route's workflow must fit its mode. Decided at the claim and kept in the journal.",
      )
      .meta({ examples: ['payload-word'] }),
    mapping: mappingSchema
      .optional()
      .describe(
        "payload-word routes: how CSV columns or XML elements map to payload fields; default the folder's mapping.",
      ),
    onInvalidRow: z
      .enum(['reject-file', 'skip'])
      .optional()
      .describe("payload-word routes: as the folder's onInvalidRow (its default)."),
  })
  .describe('One route: the files whose name matches go to this workflow and company, in this mode.');

/** The token of a route's match that names a company (pipeline/routes.ts resolves it). */
const COMPANY_TOKEN = '{company}';

/**
 * One entry of a folder's companies table: the managed company's id, or the id and the workflow
 * its files go to (a workflow belongs to one company, so each company of a {company} route
 * needs one it may use).
 */
const companyEntrySchema = z.union([
  z.string().min(1),
  z
    .strictObject({
      managedCompanyId: z.string().min(1).describe('The managed company the files are sent as.'),
      workflowId: z
        .string()
        .min(1)
        .describe(
          "The company's workflow: its files taken by a {company} route go there, whatever the route's workflowId.",
        ),
    })
    .describe("A managed company and its own workflow, for the folder's {company} routes."),
]);

export type CompanyEntry = z.output<typeof companyEntrySchema>;

/** An entry of a companies table in one shape: its managed company, and its workflow when it names one. */
export function companyEntry(entry: CompanyEntry): { managedCompanyId: string; workflowId?: string } {
  return typeof entry === 'string' ? { managedCompanyId: entry } : entry;
}

/** The matches that take every file of a flat folder (of a recursive one: `**` only): any route after one can never match. */
const MATCHES_ALL = new Set(['*', '**']);
const MATCHES_ALL_RECURSIVE = new Set(['**']);

/** How deep `recursive: true` goes: files up to this many sub-folders below the drop folder. */
const RECURSIVE_DEFAULT_DEPTH = 4;
/** The deepest a recursive folder may go (and what `.processing/` is listed down to, whatever the depth). */
export const RECURSIVE_MAX_DEPTH = 16;

const recursiveSchema = z
  .union([
    z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean()),
    z.strictObject({
      depth: count(1, RECURSIVE_MAX_DEPTH, RECURSIVE_DEFAULT_DEPTH).describe(
        `Sub-folder levels taken below the drop folder (1: acme/x.pdf; 2: acme/invoices/x.pdf), at most ${RECURSIVE_MAX_DEPTH}.`,
      ),
    }),
  ])
  .transform((v) => (v === false ? undefined : v === true ? { depth: RECURSIVE_DEFAULT_DEPTH } : v))
  .prefault(false)
  .describe(
    `Take files in sub-folders too (local and SFTP folders). false (the default): the drop folder only. true: sub-folders down to ${RECURSIVE_DEFAULT_DEPTH} levels; { depth: N }: down to N levels (1 to ${RECURSIVE_MAX_DEPTH}). Hidden sub-folders (.processing, .archive …), the agent's own folders (archive, error, output and state folders; on SFTP the remote archive and error folders) and a sub-folder whose name is not a valid file name are never entered; a symbolic link is never followed (a local one is refused like any dropped link, a remote one ignored). Routes match the file's path relative to the drop folder (acme/invoices/x.pdf); its claim (.processing), archive, error, status and proof paths keep that sub-path, on the SFTP server too. A local folder takes one inotify watch per sub-folder; an SFTP folder lists each sub-folder once per poll: see docs/configuration.md, Recursive folders.`,
  );

export const folderSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/i, 'letters, digits, - and _ only (at most 63)')
      .describe('Short unique name; used in logs, metrics and the journal. Keep it stable.')
      .meta({ examples: ['invoices'] }),
    enabled: flag(true).describe('false keeps the folder configured but not watched.'),
    source: sourceSchema,
    create: flag(false).describe(
      'Make the drop folder (source.path) when it does not exist: a local one at the folder’s start, a remote one at the first poll that reaches the server. Off by default: a missing drop folder stops this folder with DOCEX_SOURCE_FOLDER_MISSING (a mistyped path must not become a folder nobody drops into); the agent makes its own folders (.processing, archive, error) in any case.',
    ),
    workflowId: z
      .string()
      .min(1)
      .describe(
        'Workflow every file of this folder is sent to (with routes: the folder’s own, checked at start; each route names its own).',
      )
      .meta({ examples: ['wf_pdf_email'] }),
    managedCompanyId: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Send as this managed company (x-managed-company-id); the service account must be its technology partner.',
      )
      .meta({ examples: ['cmp_managed'] }),
    routes: z
      .array(routeSchema)
      .min(1)
      .optional()
      .describe(
        "Per file, first match wins: a file whose path matches a route goes to that route's workflow and company (through a {company} route: the company's, of the companies table), one that matches none is refused (DOCEX_INPUT_NO_ROUTE). Absent: every file goes to the folder's workflowId and managedCompanyId. Routes match the file's path relative to the drop folder: its name in a flat folder, acme/invoices/x.pdf in a recursive one (see recursive). The route is decided once, when the file is taken, and kept in the journal with its mode. Every route's workflow must fit the route's mode (its own, or the folder's). A route an earlier one hides (the same match, or a wider one such as *.pdf before invoice-*.pdf) is refused.",
      ),
    companies: z
      .record(
        z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/i, 'letters, digits, ., - and _ only (at most 63)'),
        companyEntrySchema,
      )
      .optional()
      .describe(
        "Company name (as it appears in file names, any case) -> managed company id, for routes whose match holds {company}. A workflow belongs to one company: an entry may give managedCompanyId and workflowId instead, and that company's files go to its own workflow (those of an entry that names none, to the route's workflowId). A name that is not in the table refuses the file, naming it and the known ones.",
      )
      .meta({
        examples: [
          {
            acme: '9b2f0c4e-1d2a-4c3b-8e5f-6a7b8c9d0e1f',
            globex: {
              managedCompanyId: '6c0a9e17-5b2d-4f8a-b3c9-1e4d7a2f8b60',
              workflowId: 'wf_globex_letters',
            },
          },
        ],
      }),
    mode: z
      .enum(FOLDER_MODES)
      .optional()
      .describe(
        "single-file, payload-pdf or payload-word. When absent it follows the workflow's input source: PAYLOAD_PDF -> payload-pdf, PAYLOAD_WORD -> payload-word, anything else -> single-file.",
      )
      .meta({ examples: ['single-file'] }),
    include: z
      .array(z.string().min(1))
      .min(1)
      .default(['*'])
      .describe(
        'Globs of the file names to take, matched against the name alone (in a recursive folder too: sub-folders are chosen by recursive and routes).',
      ),
    exclude: z
      .array(z.string().min(1))
      .default(DEFAULT_EXCLUDES)
      .describe('Globs of files to leave alone, checked after include.'),
    order: z
      .enum(SCAN_ORDERS)
      .default('mtime')
      .describe(
        'The order complete files of this folder are taken in: mtime, oldest modification time first (the same time: by name), or name, by file name.',
      ),
    maxFilesPerScan: countOrOff(1, 1_000_000).describe(
      'Files taken per scan at most (a local folder scans every 500 ms while files wait, an SFTP folder at each poll); every file is listed and sorted first, so a larger backlog drains in order across scans. off: all complete files.',
    ),
    archiveDir: pathText()
      .optional()
      .describe(
        'Where a submitted file is moved. Default: <source.path>/.archive (same disk: a rename); SFTP folders: <stateDir>/sftp/<name>/archive (local copies).',
      )
      .meta({ examples: ['./archive/invoices'] }),
    errorDir: pathText()
      .optional()
      .describe(
        'Where a refused file is moved, with a .error.json beside it. Default: <source.path>/.error; SFTP folders: <stateDir>/sftp/<name>/error.',
      )
      .meta({ examples: ['./error/invoices'] }),
    retention: z
      .strictObject({
        archive: retention().describe(
          'Files in archiveDir older than this are removed (by modification time).',
        ),
        error: retention().describe(
          'Files in errorDir older than this are removed (with their .error.json).',
        ),
      })
      .prefault({})
      .describe(
        'Housekeeping of this folder: `90d`, `12h` or `off` (keep forever, the default). Checked at start and every 6 hours; each removal is counted and logged.',
      ),
    recursive: recursiveSchema,
    stability: stabilitySchema,
    concurrency: count(1, 64, 2).describe(
      "Calls to the service for this folder's files in flight at the same time (creates, uploads); twice as many of its files are processed at once.",
    ),
    priority: count(-1000, 1000, 0).describe(
      'Across folders, -1000 to 1000: while files of several folders wait for a slot (concurrency), those of the folder with the higher priority start first. A file whose upload window already runs goes before the new files of any folder.',
    ),
    rate: rateOrOff().describe(
      "Calls to the service this folder's files start per second, minute or hour (600/min, 10/s), under pace.rate; off: none of its own.",
    ),
    allowDuplicates: flag(false).describe(
      'Submit a file whose content was already submitted from this folder (normally refused).',
    ),
    allowHardLinks: flag(false).describe(
      'Take a file with more than one hard link (normally refused: a link to any file the dropper could not read, such as the client key, would be sent).',
    ),
    onInvalidRow: z
      .enum(['reject-file', 'skip'])
      .default('reject-file')
      .describe(
        'Payload folders: a row that breaks the payload rules refuses the whole file, or only that row.',
      ),
    mapping: mappingSchema.optional(),
    payloadPdf: payloadPdfSchema,
    window: sendWindowSchema.optional(),
    sendAt: sendAtSchema.optional(),
  })
  .superRefine((folder, refinement) => {
    // Settings of the folder its kind of source cannot honour.
    for (const issue of kindOf(folder.source).folderIssues(folder)) {
      refinement.addIssue({ code: 'custom', ...issue });
    }
    for (const issue of routeIssues(
      folder.routes ?? [],
      folder.companies,
      folder.mode,
      folder.recursive !== undefined,
    )) {
      refinement.addIssue({ code: 'custom', ...issue });
    }
  })
  .transform((folder) => {
    const kind = kindOf(folder.source);
    const source: SourceConfig = kind.defaults(folder.source);
    // Derived defaults: they depend on the source, so they cannot be static defaults. '' = under
    // the state folder, filled by the kind's withStateDefaults (schema.ts).
    return {
      ...folder,
      source,
      archiveDir: folder.archiveDir ?? kind.defaultDir(source, 'archive'),
      errorDir: folder.errorDir ?? kind.defaultDir(source, 'error'),
    };
  })
  .describe(
    'One drop folder: its files become jobs of one workflow, or of the workflow of the first route their name matches.',
  );

/**
 * Routes that cannot be what was meant: one never reached, a {company} with no table or twice, a
 * mode a route cannot take, options of another mode.
 */
function routeIssues(
  routes: readonly z.output<typeof routeSchema>[],
  companies: Record<string, CompanyEntry> | undefined,
  folderMode: FolderMode | undefined,
  recursive: boolean,
): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  for (const [i, route] of routes.entries()) {
    const tokens = route.match.split(COMPANY_TOKEN).length - 1;
    if (tokens > 1) {
      issues.push({
        path: ['routes', i, 'match'],
        message: `"${route.match}" holds ${COMPANY_TOKEN} more than once`,
      });
    }
    if (tokens > 0 && companies === undefined) {
      issues.push({
        path: ['routes', i, 'match'],
        message: `"${route.match}" names a ${COMPANY_TOKEN} but the folder has no companies table`,
      });
    }
    if (tokens === 0 && route.workflowId === undefined) {
      issues.push({
        path: ['routes', i, 'workflowId'],
        message: `route "${route.match}" names no workflowId (only a ${COMPANY_TOKEN} route may leave it to the companies table)`,
      });
    }
    const without = Object.entries(companies ?? {})
      .filter(([, entry]) => companyEntry(entry).workflowId === undefined)
      .map(([name]) => name);
    if (tokens > 0 && route.workflowId === undefined && without.length > 0) {
      issues.push({
        path: ['routes', i, 'workflowId'],
        message: `route "${route.match}" names no workflowId, and the companies table names none for ${without.map((n) => `"${n}"`).join(', ')}: give the route a workflowId (theirs), or each of them { managedCompanyId, workflowId }`,
      });
    }
    if (tokens > 0 && route.managedCompanyId !== undefined) {
      issues.push({
        path: ['routes', i, 'managedCompanyId'],
        message: `"${route.match}" takes its company from ${COMPANY_TOKEN}: drop managedCompanyId`,
      });
    }
    if (route.mode === 'payload-pdf') {
      issues.push({
        path: ['routes', i, 'mode'],
        message: `route "${route.match}" cannot take mode payload-pdf: payload-pdf pairs files across the folder (a PDF and its sidecar, an index naming PDFs), so it is the folder's mode only (set mode: payload-pdf on the folder; its routes then choose among payload-pdf workflows)`,
      });
    } else if (route.mode !== undefined && folderMode === 'payload-pdf') {
      issues.push({
        path: ['routes', i, 'mode'],
        message: `route "${route.match}" cannot take mode ${route.mode} in a payload-pdf folder: the folder pairs its files across the folder (sidecars, an index), so its routes keep its mode (drop the route's mode, or give these files a folder of their own)`,
      });
    }
    const payloadWordOnly = [
      ...(route.mapping === undefined ? [] : ['mapping']),
      ...(route.onInvalidRow === undefined ? [] : ['onInvalidRow']),
    ];
    if (payloadWordOnly.length > 0 && route.mode !== undefined && route.mode !== 'payload-word') {
      issues.push({
        path: ['routes', i, payloadWordOnly[0]!],
        message: `route "${route.match}": ${payloadWordOnly.join(' and ')} ${payloadWordOnly.length > 1 ? 'are' : 'is'} for payload-word routes, not ${route.mode}`,
      });
    }
    const all = recursive ? MATCHES_ALL_RECURSIVE : MATCHES_ALL;
    const earlier = routes
      .slice(0, i)
      .findIndex((r) => r.match === route.match || all.has(r.match) || globCovers(r.match, route.match));
    if (earlier >= 0) {
      const shadow = routes[earlier]!.match;
      const why =
        shadow === route.match
          ? `routes[${earlier}] has the same match`
          : all.has(shadow)
            ? `routes[${earlier}] ("${shadow}") takes every file first`
            : `routes[${earlier}] ("${shadow}") takes every name it matches first`;
      issues.push({
        path: ['routes', i, 'match'],
        message: `route "${route.match}" can never match: ${why}`,
      });
    }
  }
  return issues;
}

export type FolderConfig = z.output<typeof folderSchema>;
export type FolderMode = (typeof FOLDER_MODES)[number];
export type ScanOrder = (typeof SCAN_ORDERS)[number];
