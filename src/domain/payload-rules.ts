/**
 * The ten "Payload job rules" of the specification as a pure function. The sandbox rejects with
 * them; the agent runs them before sending so a bad CSV row is reported with its field, not as a
 * bare 400 from the service. Fields name the request as sent (indexes before normalisation).
 */
import {
  CHANNEL_IDENTIFIER_KINDS,
  type ChannelIdentifier,
  canonicalKind,
  type PayloadJobRequest,
  type Workflow,
} from './wire.js';

export type PayloadEndpoint = 'payload-pdf' | 'payload-word';

export interface PayloadRuleViolation {
  /** Number of the rule in the specification's "Payload job rules" (1..10). */
  rule: number;
  status: 400 | 415;
  field: string;
  message: string;
}

export interface PayloadRuleInput {
  endpoint: PayloadEndpoint;
  request: PayloadJobRequest;
  workflow: Workflow;
  /** Departments the caller may use; when absent, department access is not checked. */
  callerDepartmentIds?: readonly string[];
}

const PRINT_TASKS = new Set(['EASY_PRINT', 'EASY_PRINT_FR']);

/** Maximum lengths of the structured address fields (decisions, Workflows). */
export const STRUCTURED_ADDRESS_MAX_LENGTHS: Readonly<Record<string, number>> = {
  ADDRESS_FIRST_NAME: 50,
  ADDRESS_LAST_NAME: 50,
  ADDRESS_COMPANY_NAME: 100,
  ADDRESS_STREET: 100,
  ADDRESS_STREET_NUMBER: 10,
  ADDRESS_BOX: 10,
  ADDRESS_PO_BOX: 20,
  ADDRESS_POSTAL_CODE: 12,
  ADDRESS_CITY: 50,
  ADDRESS_COUNTRY_CODE: 2,
};
const STRUCTURED_KINDS = new Set(Object.keys(STRUCTURED_ADDRESS_MAX_LENGTHS));
const STREET_KINDS = ['ADDRESS_STREET', 'ADDRESS_STREET_NUMBER', 'ADDRESS_BOX'];

/**
 * Kinds on which a channel identifier may ask for encryption (rule 10), in the specification's
 * spelling: look a kind up with canonicalKind() so DOCCLE_* counts as DOCPORTAL_*.
 */
export const ENCRYPTABLE_KINDS: ReadonlySet<string> = new Set([
  'ADDRESS',
  ...STRUCTURED_KINDS,
  'EMAIL_ADDRESS',
  'FIRST_NAME',
  'LAST_NAME',
  'BIRTH_DATE',
  'COMPANY_IDENTIFICATION_NUMBER',
  'NATIONAL_REGISTER_NUMBER',
  'EBOX_RECIPIENT_PARTITION',
  'DOCPORTAL_TOKEN_SET_VALUE1',
  'DOCPORTAL_TOKEN_SET_VALUE2',
  'DOCPORTAL_RECEIVER_ID',
]);

/** Per task: alternatives, each a set of kinds that together satisfy it (rule 7). */
const TASK_REQUIREMENTS: Record<string, { all: string[]; anyOf?: string[][] }> = {
  EMAIL: { all: ['EMAIL_ADDRESS'] },
  ERDS: { all: ['EMAIL_ADDRESS'] },
  QERDS: {
    all: ['EMAIL_ADDRESS'],
    anyOf: [
      ['COMPANY_IDENTIFICATION_NUMBER'],
      ['FIRST_NAME', 'LAST_NAME', 'BIRTH_DATE'],
      ['FIRST_NAME', 'LAST_NAME', 'ADDRESS_POSTAL_CODE', 'ADDRESS_STREET_NUMBER'],
    ],
  },
  EBOX: {
    all: [],
    anyOf: [['NATIONAL_REGISTER_NUMBER'], ['COMPANY_IDENTIFICATION_NUMBER', 'EBOX_RECIPIENT_PARTITION']],
  },
  DOCPORTAL: { all: ['DOCPORTAL_TOKEN_SET_VALUE1', 'DOCPORTAL_TOKEN_SET_VALUE2'] },
};

const POM_KINDS = ['INVOICE_AMOUNT', 'INVOICE_DUE_DATE', 'INVOICE_COMMUNICATION'];
const TRACKING_KINDS = ['INVOICE_REFERENCE', 'INVOICE_AMOUNT', 'INVOICE_DUE_DATE', 'INVOICE_COMMUNICATION'];

function isEmptyStructured(id: ChannelIdentifier): boolean {
  return STRUCTURED_KINDS.has(id.kind) && id.value.trim() === '';
}

function wantsEncryption(id: {
  mustBeEncrypted?: boolean | undefined;
  isEncrypted?: boolean | undefined;
}): boolean {
  return id.mustBeEncrypted === true || id.isEncrypted === true;
}

/** A value is encrypted when flagged, and NATIONAL_REGISTER_NUMBER always (rule 10). */
export function isEncryptedIdentifier(id: ChannelIdentifier): boolean {
  return wantsEncryption(id) || id.kind === 'NATIONAL_REGISTER_NUMBER';
}

/** Rule 5: empty structured address identifiers dropped, ADDRESS_COUNTRY_CODE upper-cased. */
export function normalisePayload<T extends PayloadJobRequest>(request: T): T {
  const channelIdentifiers = request.payload.channelIdentifiers
    .filter((id) => !isEmptyStructured(id))
    .map((id) => (id.kind === 'ADDRESS_COUNTRY_CODE' ? { ...id, value: id.value.toUpperCase() } : id));
  return { ...request, payload: { ...request.payload, channelIdentifiers } };
}

/** A kind as a message names it: the DOCPORTAL_* kinds with the reference's DOCCLE_* spelling. */
const spelled = (kind: string) =>
  kind.startsWith('DOCPORTAL_') ? `${kind} (or ${kind.replace('DOCPORTAL_', 'DOCCLE_')})` : kind;
const list = (kinds: readonly string[]) => kinds.map(spelled).join(', ');

export function checkPayloadRules(input: PayloadRuleInput): PayloadRuleViolation[] {
  const { endpoint, request, workflow } = input;
  const out: PayloadRuleViolation[] = [];
  const add = (rule: number, field: string, message: string, status: 400 | 415 = 400) =>
    out.push({ rule, status, field, message });

  // Rule 1: the workflow itself. Nothing else is meaningful when it is the wrong one.
  const expectedSource = endpoint === 'payload-pdf' ? 'PAYLOAD_PDF' : 'PAYLOAD_WORD';
  if (!workflow.enabled) add(1, 'workflowId', `workflow ${workflow.id} is not enabled`);
  if (!workflow.validated) add(1, 'workflowId', `workflow ${workflow.id} is not validated`);
  if (workflow.inputSource.type !== expectedSource) {
    add(
      1,
      'workflowId',
      `workflow ${workflow.id} has input source ${workflow.inputSource.type}; /jobs/${endpoint} needs ${expectedSource}`,
    );
  }
  if (input.callerDepartmentIds && !input.callerDepartmentIds.includes(workflow.departmentId)) {
    add(
      1,
      'workflowId',
      `workflow ${workflow.id} belongs to department ${workflow.departmentId}, not one of the caller's`,
    );
  }
  if (out.length > 0) return out;

  // Rule 2 and 3: per endpoint.
  if (endpoint === 'payload-pdf' && !/\.pdf$/i.test(request.filename)) {
    add(2, 'filename', `filename "${request.filename}" must end with .pdf for /jobs/payload-pdf`, 415);
  }
  const templateData = request.payload.templateData;
  if (
    endpoint === 'payload-word' &&
    (templateData === undefined || templateData === null || typeof templateData !== 'object')
  ) {
    add(3, 'payload.templateData', 'payload.templateData is required for /jobs/payload-word');
  }

  const ids = request.payload.channelIdentifiers;
  // DOCCLE_* and DOCPORTAL_* are one kind: the rules below see the specification's spelling.
  const present = new Set(ids.filter((id) => id.value.trim() !== '').map((id) => canonicalKind(id.kind)));
  const tasks = workflow.tasks.map((t) => t.type);
  const isPrint = tasks.some((t) => PRINT_TASKS.has(t));

  ids.forEach((id, i) => {
    const at = `payload.channelIdentifiers[${i}]`;
    if (!(CHANNEL_IDENTIFIER_KINDS as readonly string[]).includes(id.kind)) {
      add(7, `${at}.kind`, `unknown channel identifier kind "${id.kind}"`);
      return;
    }
    // Rule 4: a print workflow takes the structured address only.
    if (isPrint && id.kind === 'ADDRESS') {
      add(
        4,
        `${at}.kind`,
        'kind ADDRESS is not allowed on a print workflow (EASY_PRINT, EASY_PRINT_FR); use the structured ADDRESS_* kinds',
      );
    }
    // Rule 5: lengths and country code of non-empty structured fields.
    const max = STRUCTURED_ADDRESS_MAX_LENGTHS[id.kind];
    if (max !== undefined && !isEmptyStructured(id)) {
      const value = id.value.trim();
      if (value.length > max)
        add(5, `${at}.value`, `${id.kind} is ${value.length} characters long; at most ${max} allowed`);
      else if (id.kind === 'ADDRESS_COUNTRY_CODE' && !/^[A-Za-z]{2}$/.test(value)) {
        add(5, `${at}.value`, `ADDRESS_COUNTRY_CODE "${value}" is not an ISO 3166 alpha-2 code`);
      }
    }
    // Rule 10: encryption only on the kinds that support it.
    if (wantsEncryption(id) && !ENCRYPTABLE_KINDS.has(canonicalKind(id.kind))) {
      const flag = id.mustBeEncrypted === true ? 'mustBeEncrypted' : 'isEncrypted';
      add(10, `${at}.${flag}`, `kind ${id.kind} does not support encryption; ${flag} may not be true`);
    }
  });

  // Rule 5: a PO box is an alternative to the street address, never combined with it.
  const streetPresent = STREET_KINDS.filter((k) => present.has(k));
  if (present.has('ADDRESS_PO_BOX') && streetPresent.length > 0) {
    add(5, 'payload.channelIdentifiers', `ADDRESS_PO_BOX cannot be combined with ${list(streetPresent)}`);
  }

  // Rules 4 and 6: the structured address a print task needs.
  if (isPrint) {
    const structured = [...present].filter((k) => STRUCTURED_KINDS.has(k));
    if (structured.length === 0) {
      add(
        4,
        'payload.channelIdentifiers',
        'a print workflow needs structured address identifiers: ADDRESS_POSTAL_CODE, ADDRESS_CITY, ' +
          'ADDRESS_COUNTRY_CODE, a name (ADDRESS_COMPANY_NAME or ADDRESS_FIRST_NAME and ADDRESS_LAST_NAME) ' +
          'and ADDRESS_STREET with ADDRESS_STREET_NUMBER or ADDRESS_PO_BOX',
      );
    } else {
      const missing = ['ADDRESS_POSTAL_CODE', 'ADDRESS_CITY', 'ADDRESS_COUNTRY_CODE'].filter(
        (k) => !present.has(k),
      );
      if (missing.length > 0)
        add(6, 'payload.channelIdentifiers', `print address is missing ${list(missing)}`);
      if (
        !present.has('ADDRESS_COMPANY_NAME') &&
        !(present.has('ADDRESS_FIRST_NAME') && present.has('ADDRESS_LAST_NAME'))
      ) {
        add(
          6,
          'payload.channelIdentifiers',
          'print address needs ADDRESS_COMPANY_NAME or both ADDRESS_FIRST_NAME and ADDRESS_LAST_NAME',
        );
      }
      const hasStreet = present.has('ADDRESS_STREET') && present.has('ADDRESS_STREET_NUMBER');
      if (!present.has('ADDRESS_PO_BOX') && !hasStreet) {
        add(
          6,
          'payload.channelIdentifiers',
          'print address needs ADDRESS_STREET and ADDRESS_STREET_NUMBER, or ADDRESS_PO_BOX',
        );
      }
    }
  }

  // Rule 7: what each channel needs.
  for (const task of tasks) {
    if (task === 'PEPPOL') {
      add(
        7,
        'workflowId',
        `workflow ${workflow.id} has a PEPPOL task, which payload workflows do not support`,
      );
      continue;
    }
    const need = TASK_REQUIREMENTS[task];
    if (!need) continue;
    const missing = need.all.filter((k) => !present.has(k));
    if (missing.length > 0) add(7, 'payload.channelIdentifiers', `the ${task} task needs ${list(missing)}`);
    if (need.anyOf && !need.anyOf.some((group) => group.every((k) => present.has(k)))) {
      const options = need.anyOf.map((g) => (g.length === 1 ? g[0] : `(${list(g)})`)).join(' or ');
      add(7, 'payload.channelIdentifiers', `the ${task} task needs one of: ${options}`);
    }
  }

  // Rules 8 and 9: payment collection and invoice tracking.
  if (workflow.hasPom === true) {
    const missing = POM_KINDS.filter((k) => !present.has(k));
    if (missing.length > 0)
      add(8, 'payload.channelIdentifiers', `payment collection (hasPom) needs ${list(missing)}`);
  }
  if (workflow.invoiceConfiguration?.enableInvoiceTracking === true) {
    const missing = TRACKING_KINDS.filter((k) => !present.has(k));
    if (missing.length > 0) add(9, 'payload.channelIdentifiers', `invoice tracking needs ${list(missing)}`);
  }
  return out;
}

/** The status a service answers for a list of violations: 415 wins (rule 2), else 400. */
export function payloadViolationStatus(violations: readonly PayloadRuleViolation[]): 400 | 415 {
  return violations.some((v) => v.status === 415) ? 415 : 400;
}
