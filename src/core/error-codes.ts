/**
 * Every error code the agent throws, logs or writes into an `.error.json`, declared once: what it
 * means, what happens next (its outcome) and what the operator does. The retry policy
 * (domain/retry-policy.ts), the intake's service calls (pipeline/retry-policy.ts) and the SFTP
 * drop folders' download count (sources/sftp/source.ts) read the outcome; none keeps a list of
 * codes of its own. `DocexError` takes only these codes (and `DOCEX_API_<status>`);
 * docs/errors.md's table is generated from this list (`npm run errors:generate`), and a test
 * checks that every code in the sources is declared here and every code declared is used.
 * Texts are Markdown: they are read in docs/errors.md.
 */

export type ErrorGroup = 'service' | 'config' | 'files' | 'returns' | 'sftp' | 'inspect';

/**
 * What happens next when this code is raised or recorded. Each outcome is one treatment of today's
 * code; a new one makes every reader above decide its own (their maps are total).
 */
export const ERROR_OUTCOMES = {
  refusal:
    "the content checks refuse the file into the error folder: sending it again will not help. Raised by a later step (a payload file whose recorded rows no longer build), the file's bytes changed after it was accepted: that step fails like `internal`",
  unsendable:
    'the file cannot be sent as claimed (unreadable, or changed since its claim): the send that meets it refuses the file into the error folder; met by another step, tried again like `transient`',
  final:
    'names what this agent already did with a file (refused it, parked it, left it to another agent), written into its `.error.json` or logged: nothing tries it again',
  transient:
    'the service, the network or the machine is unwell, not the work: tried again with a growing wait; a file is parked after about a day of failures in a row',
  unreachable:
    "the SFTP server cannot be reached, or refuses the login or its host key: like `transient`, and never counted against a remote file's download tries",
  waiting:
    'the work waits for something with a bound of its own (a sidecar, an upload to settle, the journal, a stop): tried again, never parked by a count',
  internal: 'a bug or a broken invariant: tried again, parked after 3 failures in a row',
  operator:
    'the agent, a folder, a command or a file stops until the operator fixes the cause (configuration, permissions, usage); met by a step, tried again like `transient`',
} as const;

export type ErrorOutcome = keyof typeof ERROR_OUTCOMES;

export interface ErrorCodeInfo {
  group: ErrorGroup;
  /** What happens next (ERROR_OUTCOMES). */
  outcome: ErrorOutcome;
  /** What happened, as the operator sees it. */
  meaning: string;
  /** What the operator does about it (or what the agent does by itself). */
  action: string;
}

/** The groups of the table, in their order: a heading and, where needed, a paragraph. */
export const ERROR_GROUPS: Record<ErrorGroup, { title: string; intro?: string }> = {
  service: { title: '**Service and transport** (the client, `src/api/`)' },
  config: { title: '**Configuration and start-up**' },
  files: { title: '**Files** (written into `<file>.error.json`, or logged while the file waits)' },
  returns: {
    title: '**Return path and outputs** (`src/returns/`, `src/outputs/`, `report`, `webhooks`, `resend`)',
    intro:
      'Poll and download failures of the return path are logged with the code of the underlying error\n' +
      '(`DOCEX_API_<status>`, `DOCEX_NETWORK`, `DOCEX_DOWNLOAD_SIZE_MISMATCH`, `DOCEX_OUTPUT_WRITE`, …) and\n' +
      'retried later.',
  },
  sftp: {
    title:
      '**SFTP** (`src/sftp/`, `src/sources/sftp/`, `src/outputs/sftp-target.ts`; see [sftp.md](sftp.md))',
  },
  inspect: { title: '**Content checks** (`src/pipeline/inspect/`)' },
};

/** An answer of the service with that HTTP status: `DOCEX_API_400`, `DOCEX_API_503`, … */
export type ApiStatusCode = `DOCEX_API_${number}`;

export const API_STATUS_CODE: ErrorCodeInfo & { name: string } = {
  name: 'DOCEX_API_<status>',
  group: 'service',
  // A refusing status at a job's creation refuses the file (pipeline/retry-policy.ts).
  outcome: 'transient',
  meaning:
    'the service answered that status (e.g. `DOCEX_API_400`, `DOCEX_API_403`, `DOCEX_API_409`); the message carries its problem `detail` and field errors',
  action:
    '400/415: fix the request or file; 403: API key, workflow or managed company not allowed; 409: upload or resend not allowed in that state',
};

const REPORT_BUG = 'report it with the log line: it is a bug';
const FIX_AND_DROP = 'fix the file at its source and drop it again';

export const ERROR_CODES = {
  // Service and transport
  DOCEX_AUTH_TOKEN: {
    group: 'service',
    outcome: 'transient',
    meaning: 'the OAuth token endpoint refused the client or could not be reached',
    action: 'check client id/secret and the auth URL',
  },
  DOCEX_TLS: {
    group: 'service',
    outcome: 'transient',
    meaning:
      'the TLS handshake failed (client certificate missing, not trusted, expired; server not signed by the pinned CA)',
    action: 'check the `tls` certificate, key and CA files',
  },
  DOCEX_FILE_BLOCKED: {
    group: 'service',
    outcome: 'transient',
    meaning:
      'a file was claimed an hour ago and is still not uploaded or refused (logged once per file, at error)',
    action:
      '`docex-agent status <file>` shows its last step; usually the service is unreachable or uploads keep failing',
  },
  DOCEX_SERVICE_UNREACHABLE: {
    group: 'service',
    outcome: 'transient',
    meaning:
      'every call to the service has failed (no answer, 429 or 5xx) for 5 minutes; logged once per outage, and /readyz fails until an answer comes',
    action: "check the network path and the service's status; nothing is lost, files and jobs wait",
  },
  DOCEX_NETWORK: {
    group: 'service',
    outcome: 'transient',
    meaning: 'connection refused, reset or timed out after the retries',
    action: 'check the network path; safe calls are retried with backoff',
  },
  DOCEX_UPLOAD_EXPIRED: {
    group: 'service',
    outcome: 'transient',
    meaning: 'the pre-signed upload URL answered 403: its 2-hour window passed',
    action: 'nothing: the agent creates the job again',
  },
  DOCEX_UPLOAD_MAYBE_DONE: {
    group: 'service',
    outcome: 'transient',
    meaning: 'a retried upload got 409: an earlier attempt may have landed',
    action: 'nothing: the agent checks the job with GET /jobs/{id}',
  },
  DOCEX_UPLOAD_ETAG_MISMATCH: {
    group: 'service',
    outcome: 'transient',
    meaning: 'the ETag of the upload answer is not the MD5 of the file sent',
    action: 'retried; persistent: something alters bodies on the way',
  },
  DOCEX_DOWNLOAD_SIZE_MISMATCH: {
    group: 'service',
    outcome: 'transient',
    meaning: 'a download ended with another size than announced',
    action: 'retried; nothing partial is left',
  },
  DOCEX_SOURCE_READ: {
    group: 'service',
    outcome: 'unsendable',
    meaning: 'the file to upload could not be opened or read',
    action: 'check permissions and the disk',
  },
  DOCEX_SOURCE_CHANGED: {
    group: 'service',
    outcome: 'unsendable',
    meaning:
      'the file changed (size, mtime, or content against the SHA-256 taken at its claim) before or while it was being sent; a streamed upload stops before its last byte',
    action: 'the producer must not touch a file once dropped',
  },
  DOCEX_LOCAL_IO: {
    group: 'service',
    outcome: 'transient',
    meaning: 'writing a download failed (disk full, missing folder)',
    action: 'free space, check the output folder',
  },
  DOCEX_RESPONSE_INVALID: {
    group: 'service',
    outcome: 'internal',
    meaning: 'an answer did not have the documented shape',
    action: 'report it with the log line',
  },
  DOCEX_INVALID_ARGUMENT: {
    group: 'service',
    outcome: 'operator',
    meaning: 'a call was given an unreadable date (or one without a time zone) or an empty id',
    action: 'fix the caller',
  },
  DOCEX_UBL_INVALID: {
    group: 'service',
    outcome: 'operator',
    meaning: 'an XML document is not a readable UBL invoice or credit note (or holds a DTD/entities)',
    action: 'check the document',
  },

  // Configuration and start-up
  DOCEX_CONFIG_FILE: {
    group: 'config',
    outcome: 'operator',
    meaning: `the config file, or a \`\${file:…}\` it names, cannot be read`,
    action: 'check the path and that the agent may read it',
  },
  DOCEX_CONFIG_YAML: {
    group: 'config',
    outcome: 'operator',
    meaning: 'the config file is not valid YAML (line and column given)',
    action: 'fix the file at that line and column',
  },
  DOCEX_CONFIG_ENV: {
    group: 'config',
    outcome: 'operator',
    meaning: `a \`\${env:NAME}\` names an unset variable`,
    action: 'set the variable in the service environment, or fix its name',
  },
  DOCEX_CONFIG_SECRET_PERMISSIONS: {
    group: 'config',
    outcome: 'operator',
    meaning: 'a secret file (or the private key) is readable by group or others',
    action: '`chmod 600` it',
  },
  DOCEX_CONFIG_INVALID: {
    group: 'config',
    outcome: 'operator',
    meaning: 'the config does not match the schema; every problem is listed as `path: message`',
    action: 'fix each listed option ([configuration.md](configuration.md))',
  },
  DOCEX_CONFIG_MODE: {
    group: 'config',
    outcome: 'operator',
    meaning: "a folder's `mode` does not fit its workflow's input source",
    action: 'set the `mode` that fits the workflow, or point the folder at another workflow',
  },
  DOCEX_FOLDER_WORKFLOW: {
    group: 'config',
    outcome: 'operator',
    meaning:
      "a folder's workflow is missing, disabled, not validated or of another input source: that folder is stopped, the others run",
    action: "fix the folder's `workflowId` or the workflow in the service, then reload",
  },
  DOCEX_FOLDER_UNSAFE: {
    group: 'config',
    outcome: 'operator',
    meaning:
      "a folder the agent writes into (`.processing`, archive, error, SFTP spool, output folder) is a symbolic link or not a directory: at start or at run time that folder is stopped (listed by `/readyz` and `docex_folders_stopped`), the others run; nothing is written through the link and its files wait in `.processing` or the drop folder until the folder starts again (a reload or a restart, once a real directory is back); an output folder's write fails and `/readyz` names the output",
    action: 'put a real directory in place of the link, then reload or restart',
  },
  DOCEX_SUBMIT_MODE: {
    group: 'config',
    outcome: 'operator',
    meaning: '`docex-agent submit` was pointed at a workflow that is not a single-file one',
    action: 'drop payload files into a folder of that workflow instead',
  },
  DOCEX_SOURCE_FOLDER_MISSING: {
    group: 'config',
    outcome: 'operator',
    meaning:
      "a folder's drop folder (`folders[N].source.path`) does not exist, is not a folder, or cannot be reached (`EACCES`: a folder above it the agent's user may not enter); the agent makes no drop folder unless the folder says `create: true`. A local one stops that folder at start or reload (one error line naming the folder, `path` and the key `at`; listed by `/readyz` and `docex_folders_stopped`, and named by `docex-agent status <file>` for a file found nowhere), the others run; a remote (SFTP) one is logged once and looked for again at each poll",
    action:
      "create it for the agent's user and the ERP's group (`install -d -o docex-agent -g docex-agent -m 2770 <path>`, [systemd/README.md](../systemd/README.md) step 5) or correct the path, then reload; `docex-agent check` says which",
  },
  DOCEX_SOURCE_GLOB_INVALID: {
    group: 'config',
    outcome: 'operator',
    meaning: 'an include/exclude glob cannot be read',
    action: 'fix the glob in the folder',
  },
  DOCEX_JOURNAL_LOCKED: {
    group: 'config',
    outcome: 'operator',
    meaning: 'another agent (pid given) holds the state folder',
    action: 'stop the other agent, or give this one its own `stateDir`',
  },
  DOCEX_JOURNAL_VERSION: {
    group: 'config',
    outcome: 'operator',
    meaning: 'the journal was written by a newer docex-agent',
    action: 'upgrade the agent',
  },
  DOCEX_JOURNAL_UNAVAILABLE: {
    group: 'config',
    outcome: 'waiting',
    meaning:
      'the PostgreSQL journal cannot be reached or refused a statement (connection refused or lost, timed out, authentication or permissions, database missing or read-only, server shutting down); the message names the server without its password, with the SQLSTATE when PostgreSQL gave one. Work that needs the journal waits and is tried again',
    action:
      "check the journal's `url`, password, `tls` and the database's grants, and that the server is up and reachable",
  },
  DOCEX_CLI_USAGE: {
    group: 'config',
    outcome: 'operator',
    meaning:
      'a command was called with missing or contradicting options (also `report --date` with a bad date or without a returns store)',
    action: 'see `docex-agent <command> --help`',
  },
  DOCEX_CONFIG_CREDENTIAL: {
    group: 'config',
    outcome: 'operator',
    meaning: `a \`\${credential:NAME}\` cannot be read: \`CREDENTIALS_DIRECTORY\` is not set (not started by systemd), the name is not a file name, or the unit has no \`LoadCredential=NAME:…\``,
    action: 'start the agent from its systemd unit and add the `LoadCredential=` line',
  },
  DOCEX_CREDENTIALS: {
    group: 'config',
    outcome: 'operator',
    meaning:
      '`docex-agent credentials`: `init` would overwrite an existing key or request, or has no common name; `check` has no TLS files to check',
    action: 'move the old key away or give `--cn`; configure `tls` before `check`',
  },
  DOCEX_RETURNS_STORE_VERSION: {
    group: 'config',
    outcome: 'operator',
    meaning: '`<stateDir>/returns.sqlite` was written by a newer docex-agent',
    action: 'upgrade the agent',
  },
  DOCEX_INBOX_VERSION: {
    group: 'config',
    outcome: 'operator',
    meaning: '`<stateDir>/inbox.sqlite` was written by a newer docex-agent',
    action: 'upgrade the agent',
  },
  DOCEX_WEBHOOK_LISTEN: {
    group: 'config',
    outcome: 'operator',
    meaning: 'the webhook receiver cannot listen on `webhooks.listen` (port in use, address not local)',
    action: 'free the port or choose another `webhooks.listen`',
  },
  DOCEX_OPS_LISTEN: {
    group: 'config',
    outcome: 'operator',
    meaning:
      'logged: the health and metrics endpoints cannot listen on `ops.listen` (address taken or not allowed); the agent runs on without them',
    action: 'free the port, choose another `ops.listen`, or set `ops.enabled: false`',
  },

  // Files
  DOCEX_DUPLICATE: {
    group: 'files',
    outcome: 'final',
    meaning:
      'the same content (SHA-256) was already submitted from this folder or to this workflow, as the same managed company',
    action: 'set `allowDuplicates` to send it again',
  },
  DOCEX_PAYLOAD_ROW_INVALID: {
    group: 'files',
    outcome: 'final',
    meaning: 'a payload row breaks a payload rule (the row report names row, rule and column)',
    action: 'fix the row and drop it again',
  },
  DOCEX_REJECTED: {
    group: 'files',
    outcome: 'final',
    meaning: 'refused; the reason beside it says why',
    action: 'read the reason',
  },
  DOCEX_UPLOAD_WINDOW: {
    group: 'files',
    outcome: 'final',
    meaning: 'no upload succeeded in five job attempts (upload windows missed)',
    action: 'check the path to the files host, then drop the file again',
  },
  DOCEX_CREATE_UNANSWERED: {
    group: 'files',
    outcome: 'final',
    meaning: 'the answers to 20 job creates of one file were lost on the way back; their jobs expire unused',
    action: 'check the network to the service, then drop the file again',
  },
  DOCEX_CREATE_UNSETTLED: {
    group: 'files',
    outcome: 'waiting',
    meaning:
      'logged: a job create got no answer (a timeout, a reset) and its job is not found by name yet; the service may still be handling it, so it is not sent again before the API timeout (`timeouts.headersMs`) has passed since it was sent',
    action: 'nothing: looked up again, and sent again only once the lookup still finds nothing after that',
  },
  DOCEX_PACE_TURN_LATE: {
    group: 'files',
    outcome: 'waiting',
    meaning:
      "logged: a call to the service waited its turn in the pace of the service host (a Retry-After, `pace.rate` or the folder's `rate`, no free place) until its time ran out, or until too little was left to send it (a job create's lease allowance on a shared journal, less than `cluster.createMarginMs` left); it was not sent",
    action: 'nothing: tried again later, its lease renewed; if it lasts, lower the load or raise the rates',
  },
  DOCEX_PLACEMENT_BUSY: {
    group: 'files',
    outcome: 'waiting',
    meaning:
      "logged: several agents on one journal, an SFTP folder: another agent is moving its own copy of this file into the archive or error folder now (it held the file before, and may have been frozen past its lease). This agent's copy waits, and is dropped once the other's is placed; it waits as long as that agent's database session lives",
    action:
      'nothing, unless it lasts: then the agent named by `docex-agent agents` as holding an old session is hung (stopped, swapping); end it and the file carries on',
  },
  DOCEX_SEND_WINDOW_CLOSED: {
    group: 'files',
    outcome: 'waiting',
    meaning:
      "logged and recorded on the file: its folder's send window (`window`) is closed, so its job is not created yet; the file was taken and checked, and `docex-agent status <file>` says until when it waits",
    action:
      "nothing: its job is created when the window opens; change the folder's `window` to send at other hours",
  },
  DOCEX_UPLOAD_PENDING: {
    group: 'files',
    outcome: 'waiting',
    meaning: 'logged: the job still awaits its file',
    action: 'nothing: retried',
  },
  DOCEX_INPUT_NO_ROUTE: {
    group: 'files',
    outcome: 'refusal',
    meaning:
      "The folder has `routes` and the file's name matches none of them (the reason lists the routes tried), or its `{company}` part names a company not in the folder's `companies` table (the reason names it and the known ones).",
    action: 'rename the file to fit a route, or add a route or company to the folder, then drop it again',
  },
  DOCEX_INPUT_SIDECAR_MISSING: {
    group: 'files',
    outcome: 'refusal',
    meaning: 'a payload-pdf PDF waited 10 minutes without its `<name>.json` payload',
    action: 'drop the PDF and its payload file together',
  },
  DOCEX_INPUT_SIDECAR_ORPHAN: {
    group: 'files',
    outcome: 'refusal',
    meaning: 'a payload-pdf payload file (`<name>.json`) waited 10 minutes without its PDF',
    action: 'drop the PDF and its payload file together',
  },
  DOCEX_BATCH_PENDING: {
    group: 'files',
    outcome: 'waiting',
    meaning: 'logged: a payload-pdf index waits for the PDFs it names',
    action: 'nothing: retried up to 10 minutes',
  },
  DOCEX_SIDECAR_PENDING: {
    group: 'files',
    outcome: 'waiting',
    meaning: 'logged: a payload-pdf PDF waits for its `<name>.json`',
    action: 'nothing: retried',
  },
  DOCEX_SOURCE_LOST: {
    group: 'files',
    outcome: 'final',
    meaning: 'the claimed file disappeared from `.processing/`',
    action: 'find who removed it; drop it again if it was not sent',
  },
  DOCEX_SOURCE_CLAIM_CHANGED: {
    group: 'files',
    outcome: 'transient',
    meaning: 'logged: the file changed while being claimed',
    action: 'nothing: it is observed again',
  },
  DOCEX_SOURCE_CLAIM_FAILED: {
    group: 'files',
    outcome: 'transient',
    meaning: 'the claim rename failed for another reason than a lost race',
    action: 'check permissions and the disk of the drop folder',
  },
  DOCEX_SOURCE_FILE_UNREADABLE: {
    group: 'files',
    outcome: 'operator',
    meaning:
      'logged once per file, as a warning: a complete file in a drop folder that the agent cannot read, stat or move (permissions); it waits there untouched, counted by `docex_files_unreadable` and listed by /readyz and `docex-agent status`',
    action:
      "the line's `fix`: usually the ERP's account writes with umask 077 or outside the agent's group (umask 007 or 027, group membership, or a default ACL: systemd/README.md); once fixed (`chmod g+r`) the file is taken",
  },
  DOCEX_SOURCE_WATCH_LIMIT: {
    group: 'files',
    outcome: 'operator',
    meaning:
      'logged once per folder, as a warning: a recursive folder reached the watch limit (inotify `fs.inotify.max_user_watches`, or too many open files) and watches no more sub-folders; files are still taken, those in sub-folders not watched found by the rescan of the whole tree (every minute)',
    action:
      'raise `fs.inotify.max_user_watches` above the sub-folders of every recursive folder (docs/configuration.md, Recursive folders), then restart the agent',
  },
  DOCEX_PLACE_FAILED: {
    group: 'files',
    outcome: 'transient',
    meaning: 'moving a file to archive or error failed; it stays in `.processing/` and is retried',
    action: 'check permissions and space of the archive and error folders',
  },
  DOCEX_STOPPING: {
    group: 'files',
    outcome: 'waiting',
    meaning: 'logged: work interrupted by a stop',
    action: 'nothing: resumed at the next start',
  },
  DOCEX_INTERNAL: {
    group: 'files',
    outcome: 'internal',
    meaning:
      'an unexpected error (a bug); the file is tried again, and parked after 3 such failures in a row',
    action: 'report it',
  },
  DOCEX_PARKED: {
    group: 'files',
    outcome: 'final',
    meaning:
      'the retry policy gave up on a file (3 internal failures in a row, or about a day of a service or disk that stays unwell): it is in the error folder, and its `.error.txt` lists what was sent (job ids, never send again), what may have been sent (job names to look up) and what was not; the rows not sent of a payload-word file are in `<file>.unsent.json`',
    action: 'fix the cause, then drop again what was not sent (`<file>.unsent.json` is ready to drop)',
  },
  DOCEX_LEASE_LOST: {
    group: 'files',
    outcome: 'final',
    meaning:
      'several agents on one journal: this agent no longer holds the file. Its lease ran out (the agent was frozen, or cut off from the journal for longer than `cluster.leaseMs`) and another agent took the file over; this agent stopped touching it at once and changed nothing, the other carries it on',
    action:
      'nothing for the file. If it happens often, find what stalls the agent (CPU, swap, the database connection) or raise `cluster.leaseMs`',
  },
  DOCEX_JOURNAL_TRANSITION: {
    group: 'files',
    outcome: 'internal',
    meaning: 'a journal invariant was broken: a move to a state not allowed from the current one',
    action: REPORT_BUG,
  },
  DOCEX_JOURNAL_FIELDS: {
    group: 'files',
    outcome: 'internal',
    meaning: 'a journal invariant was broken: a move without the fields its target state needs',
    action: REPORT_BUG,
  },
  DOCEX_JOURNAL_ROWS: {
    group: 'files',
    outcome: 'internal',
    meaning:
      "a journal invariant was broken: a payload file's rows were recorded wrongly (on an item that is not a validated file, none, twice, or a bad row index)",
    action: REPORT_BUG,
  },
  DOCEX_JOURNAL_UNKNOWN_ITEM: {
    group: 'files',
    outcome: 'internal',
    meaning: 'a journal invariant was broken: an item id that is not in the journal',
    action: REPORT_BUG,
  },

  // Return path and outputs
  DOCEX_OUTPUT_PATH: {
    group: 'returns',
    outcome: 'operator',
    meaning: 'a file name (status file, proof name template) would leave its output folder',
    action: 'fix `returns.proofs.nameTemplate`; report it if the template is the default',
  },
  DOCEX_OUTPUT_WRITE: {
    group: 'returns',
    outcome: 'transient',
    meaning:
      'writing a file to an output folder failed (disk full, permissions, missing mount, an SFTP failure given as its cause); nothing partial is left',
    action: 'fix the folder; the write is retried',
  },
  DOCEX_RESEND_NOT_FINAL: {
    group: 'returns',
    outcome: 'operator',
    meaning: '`resend` of a sending event that is not in a final state yet',
    action: 'wait until it ends (SUCCESS, FAILURE or REJECTED)',
  },
  DOCEX_RESEND_OF_RESEND: {
    group: 'returns',
    outcome: 'operator',
    meaning: '`resend` of an event that is itself a re-send',
    action: 're-send the source event it names',
  },
  DOCEX_RESEND_REFUSED: {
    group: 'returns',
    outcome: 'operator',
    meaning: 'the service answered 409 to a resend our checks allowed (a race, or a rule of the service)',
    action: "read the service's reason in the message",
  },
  DOCEX_RESEND_DONE: {
    group: 'returns',
    outcome: 'operator',
    meaning: 'the event was already re-sent (the service lists a re-send of it)',
    action: '`--again` re-sends it once more, on purpose',
  },
  DOCEX_RESEND_UNANSWERED: {
    group: 'returns',
    outcome: 'operator',
    meaning: 'the re-send got no answer and the service lists no new re-send: it was not made',
    action: 'run the command again',
  },
  DOCEX_WEBHOOK_SECRET: {
    group: 'returns',
    outcome: 'operator',
    meaning: 'a webhook secret to store is not a `whsec_` base64 secret',
    action: 'report it: the service answered an unexpected secret',
  },
  DOCEX_WEBHOOK_TEST_FAILED: {
    group: 'returns',
    outcome: 'operator',
    meaning: '`webhooks test`: the receiver answered non-2xx, or nothing (status 0)',
    action: 'check the URL, the reverse proxy and that the agent holds the secret',
  },

  // SFTP
  DOCEX_SFTP_HOST_KEY: {
    group: 'sftp',
    outcome: 'unreachable',
    meaning:
      "the server's host key is not pinned (unknown), differs from the pin (changed), is revoked, or the known_hosts file cannot be read; the message names the fingerprint seen",
    action:
      "check the fingerprint with the server's administrator; add it to `hostKey.sha256` or the known_hosts file. A changed key you did not expect may be a man-in-the-middle",
  },
  DOCEX_SFTP_AUTH: {
    group: 'sftp',
    outcome: 'unreachable',
    meaning: 'the server refused the login (wrong user, password or key), or no password or key was given',
    action: "check `username`, the password or key, and the server's authorized_keys",
  },
  DOCEX_SFTP_CONNECT: {
    group: 'sftp',
    outcome: 'unreachable',
    meaning:
      'the server cannot be reached, the login timed out, keepalives went unanswered, or the connection broke during an operation ("next attempt in Ns" while backing off)',
    action: 'check host, port and network; the agent reconnects by itself',
  },
  DOCEX_SFTP_NOT_FOUND: {
    group: 'sftp',
    outcome: 'transient',
    meaning: 'the remote file or folder does not exist',
    action: 'check `path`; a file may have been taken by someone else',
  },
  DOCEX_SFTP_PERMISSION: {
    group: 'sftp',
    outcome: 'transient',
    meaning: 'the server denied the operation',
    action: 'give the SFTP user the rights on that folder',
  },
  DOCEX_SFTP_IO: {
    group: 'sftp',
    outcome: 'transient',
    meaning:
      "another SFTP failure (the server's message is included), a non-folder in the way of a folder, or a local stream failure during an upload",
    action: 'read the message; retried on the next pass',
  },
  DOCEX_SFTP_RENAME_REFUSED: {
    group: 'sftp',
    outcome: 'operator',
    meaning:
      'the server refuses RENAME (unsupported or denied); a drop folder logs it once at warn level when it falls back',
    action:
      'outputs: set `staging` ([sftp.md](sftp.md#servers-that-refuse-rename)); drop folders switch to a journal-only claim by themselves',
  },
  DOCEX_SFTP_TARGET_EXISTS: {
    group: 'sftp',
    outcome: 'transient',
    meaning: 'a rename found its target name taken (renames never replace a file)',
    action: 'the agent picks another name where it can; otherwise remove the old file',
  },
  DOCEX_SFTP_SIZE_MISMATCH: {
    group: 'sftp',
    outcome: 'transient',
    meaning: 'a downloaded file is shorter or longer than the listing said: it changed since it was listed',
    action: 'nothing is kept; the file is looked at again on the next listing',
  },
  DOCEX_SFTP_DOWNLOAD_FAILED: {
    group: 'sftp',
    outcome: 'final',
    meaning:
      'the server refused to serve a remote file 5 times in a row (permission denied, an I/O error it answers; dropped connections never count); it was moved to the remote error folder with the reason',
    action: "fix the file's permissions on the server and drop it again",
  },

  // Content checks: the file is refused into the error folder with one sentence of reason.
  DOCEX_INPUT_UNREADABLE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The file could not be opened or read (gone, no permission, I/O error).',
    action: "give the agent's user read access, then drop it again",
  },
  DOCEX_INPUT_POISON: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'The agent crashed twice while inspecting this file (its parse never ended): at the next start it was set aside in the error folder before anything else, so it cannot crash the agent again.',
    action: 'report it with the file if you can share it',
  },
  DOCEX_INPUT_NOT_A_FILE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The path is a directory, device or socket, not a regular file.',
    action: 'drop regular files only',
  },
  DOCEX_INPUT_SYMLINK: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The path is a symbolic link; links are refused so a drop cannot point outside its folder.',
    action: 'drop the file itself, not a link',
  },
  DOCEX_INPUT_HARD_LINK: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      "The file has more than one hard link (it may be any file of the machine, such as the client key); refused unless the folder's `allowHardLinks` is set.",
    action: 'drop a copy, or set `allowHardLinks` if the producer links on purpose',
  },
  DOCEX_INPUT_BAD_NAME: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'The file name contains control characters (a newline, tab or NUL), line or paragraph separators or invisible format characters (a right-to-left override), or is not valid UTF-8 (a Latin-1 name).',
    action: 'rename it and drop it again',
  },
  DOCEX_INPUT_EMPTY: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The file has zero bytes.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_TOO_LARGE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The file is over the configured size limit, or too large to be checked.',
    action: "split it, or raise the folder's size limit",
  },
  DOCEX_INPUT_TOO_COMPLEX: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'Checking the file went over an inspection limit (`inspection.memory`, `inspection.timeLimit` or one of `inspection.limits`: PDF inflation, CSV columns or line length, XML elements or attributes, sidecar size), or stopped the inspector; the reason names which.',
    action: 'raise the named limit if the file is genuine; otherwise refuse it at its source',
  },
  DOCEX_INPUT_UNKNOWN_TYPE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The content is not a PDF, ZIP, XML, JSON or CSV file.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_TYPE_MISMATCH: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The extension says one type and the content (magic bytes) another.',
    action: 'give the file the extension of its content',
  },
  DOCEX_INPUT_WRONG_FOR_WORKFLOW: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: "The file's type is not one the folder's workflow input source takes.",
    action: 'drop it into a folder whose workflow takes that type',
  },
  DOCEX_INPUT_ENCODING: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'A text file (CSV, XML, JSON, a sidecar or an index file) is not valid UTF-8: it is UTF-16 or UTF-32 (with or without a byte order mark; the reason names which), or holds bytes no UTF-8 text has (Latin-1).',
    action: 'have the producer write UTF-8',
  },
  DOCEX_INPUT_PDF_CORRUPT: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The PDF cannot be parsed.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_PDF_TRUNCATED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The PDF has no %%EOF marker at its end: it was cut short.',
    action: 'drop the whole file again (the producer may have been interrupted)',
  },
  DOCEX_INPUT_PDF_ENCRYPTED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The PDF is encrypted or password-protected.',
    action: 'drop it without encryption',
  },
  DOCEX_INPUT_PDF_EMPTY: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The PDF has no pages.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_CSV_MALFORMED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The CSV cannot be parsed (unterminated quotes, no header).',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_CSV_RAGGED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'Some CSV rows have a different number of fields than the header.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_NO_RECORDS: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The file parses but holds no data row, record or document.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_XML_DTD: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The XML has a DOCTYPE or ENTITY declaration, refused (entity bombs, external entities).',
    action: 'have the producer write XML without a DOCTYPE',
  },
  DOCEX_INPUT_XML_MALFORMED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The XML is not well-formed.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_NOT_UBL: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The XML is not a UBL invoice or credit note with number, date, sender and receiver.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_UNSAFE_KEY: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'A `data.<path>` column, JSON key or XML element is named `__proto__`, `constructor` or `prototype`: names that could reach every object of the agent are refused.',
    action: 'rename the column, key or element',
  },
  DOCEX_INPUT_JSON_MALFORMED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'The JSON cannot be parsed, is not an object or array of objects, or nests more than 100 levels deep.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_JSON_NUMBER: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'A JSON number cannot be kept exactly (more significant digits than a double holds, or out of range); write it as a string.',
    action: 'write the number as a string',
  },
  DOCEX_INPUT_JSON_DUPLICATE_KEY: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'A JSON object of a payload file or sidecar names the same key twice (`"value"` and `"\\u0076alue"` count as one): a JSON reader keeps only one of the values, so the row is refused; the row report names the key and its path.',
    action: 'remove the repeated key',
  },
  DOCEX_INPUT_CONTROL_CHARACTER: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'A payload value or key holds a control character (NUL, another C0 character but tab and line feed, DEL or a C1 character), a lone surrogate (a broken `\\ud800` escape), or a line break in a one-line field (identifiers, names, kinds, jobName, filename, template data keys); the row is refused and the row report names its field, column and the code point, never the value.',
    action: 'fix the value at its source and drop the file again',
  },
  DOCEX_INPUT_INVISIBLE_CHARACTER: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'An identifier (e-mail address, phone number, Peppol id, ID number, a name, workflowId, jobName, filename) holds a bidi control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), a zero-width character (U+200B–U+200D, U+2060, U+FEFF) or another invisible character; the row is refused and the row report names its field, column and the code point.',
    action: 'fix the value at its source and drop the file again',
  },
  DOCEX_INPUT_ZIP_CORRUPT: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The ZIP cannot be read.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_ZIP_EMPTY: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The ZIP holds no file.',
    action: FIX_AND_DROP,
  },
  DOCEX_INPUT_ZIP_UNSAFE_PATH: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'A ZIP entry name is absolute, climbs out with "..", or has a backslash.',
    action: 'zip the files with plain relative names',
  },
  DOCEX_INPUT_ZIP_SYMLINK: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'A ZIP entry is a symbolic link.',
    action: 'zip the files themselves, not links',
  },
  DOCEX_INPUT_ZIP_BAD_NAME: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'A ZIP entry has a name no dropped file may have (the rule of `DOCEX_INPUT_BAD_NAME`, segment by segment): control characters, line or paragraph separators, invisible format characters (a right-to-left override, a zero-width space), a name marked UTF-8 that is not, an empty or "." segment, or a segment over 255 bytes.',
    action: 'rename the entry inside the archive and drop it again',
  },
  DOCEX_INPUT_ZIP_NOT_A_FILE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      "A ZIP entry is neither a regular file nor a folder by its recorded type (a device, FIFO or socket by its Unix mode), or is recorded as a folder under a file's name.",
    action: 'zip regular files only',
  },
  DOCEX_INPUT_ZIP_DUPLICATE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'Two ZIP entries have the same name once case and Unicode normalisation are set aside (`a.pdf` and `A.PDF`, or a file `x` beside a folder `x/`): extracted, one would replace the other.',
    action: 'give every entry its own name',
  },
  DOCEX_INPUT_ZIP_ENCRYPTED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'A ZIP entry is encrypted.',
    action: 'zip without encryption',
  },
  DOCEX_INPUT_ZIP_NESTED: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'A ZIP entry is itself an archive.',
    action: 'zip the files, not archives of them',
  },
  DOCEX_INPUT_ZIP_BOMB: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'A ZIP entry expands more than the allowed ratio, or all entries more than the allowed total.',
    action: 'raise the ZIP limits if the archive is genuine; otherwise refuse it at its source',
  },
  DOCEX_INPUT_ZIP_TOO_MANY_ENTRIES: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The ZIP has more entries than allowed.',
    action: 'split the archive, or raise the entry limit',
  },
  DOCEX_INPUT_ZIP_ENTRY_TYPE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: "A ZIP entry is not of the type the workflow takes (e.g. not a PDF in a PDF workflow's ZIP).",
    action: 'zip only files of the type the workflow takes',
  },
  DOCEX_INPUT_PAYLOAD_COLUMNS: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'A payload CSV or XML mapping names an unknown or conflicting column.',
    action: "fix the file's header or the folder's mapping",
  },
  DOCEX_INPUT_PAYLOAD_MAPPING: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'The per-folder XML mapping does not fit the file (record element not found).',
    action: "fix the folder's XML mapping or the file",
  },
  DOCEX_INPUT_BATCH_INDEX: {
    group: 'inspect',
    outcome: 'refusal',
    meaning: 'A payload-pdf batch lacks index.csv, or index.csv and the PDFs do not match one to one.',
    action: 'drop the batch again with an index.csv naming each PDF once',
  },
  DOCEX_INPUT_EXECUTION_DATE: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      "A row's execution date (`executionDate` or `sendingEventExecutionDateUtc`) is not an ISO 8601 date-time with its offset (`2026-12-01T09:00:00+01:00`, `…Z`), or is not later than the time the file was taken.",
    action: 'write the date with its offset and in the future, then drop the row again',
  },
  DOCEX_INPUT_ROWS_INVALID: {
    group: 'inspect',
    outcome: 'refusal',
    meaning:
      'One or more rows break the payload rules; the whole file is refused (onInvalidRow: reject-file).',
    action: 'fix the rows the row report names and drop the file again',
  },
} as const satisfies Record<`DOCEX_${string}`, ErrorCodeInfo>;

/** A code declared above. */
export type DeclaredErrorCode = keyof typeof ERROR_CODES;

/** Every code a `DocexError` may carry. */
export type ErrorCode = DeclaredErrorCode | ApiStatusCode;

/** The declared codes of one group, as a type (`ErrorCodeOf<'inspect'>`). */
export type ErrorCodeOf<G extends ErrorGroup> = {
  [K in DeclaredErrorCode]: (typeof ERROR_CODES)[K]['group'] extends G ? K : never;
}[DeclaredErrorCode];

/** What happens next after `code`: a declared code's outcome, `DOCEX_API_<status>`'s; undefined for any other text. */
export function outcomeOf(code: string): ErrorOutcome | undefined {
  if (Object.hasOwn(ERROR_CODES, code)) return ERROR_CODES[code as DeclaredErrorCode].outcome;
  return /^DOCEX_API_\d+$/.test(code) ? API_STATUS_CODE.outcome : undefined;
}
