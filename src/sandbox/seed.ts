/**
 * What a new sandbox holds: four companies (a technology partner, the two companies it manages, and
 * one it does not), their departments and users, one workflow of every kind tests and samples need
 * (ids fixed in seed-ids.ts), and the Peppol BIS 3 example documents as incoming documents.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isoTime } from '../core/clock.js';
import type { PdfIdentifierRule } from './content/pdf-identifiers.js';
import type { SandboxContext } from './context.js';
import { addPeppolDocument } from './peppol-documents.js';
import { WORKFLOW_KIND } from './routes/workflows.js';
import { SEED } from './seed-ids.js';

export { addPeppolDocument } from './peppol-documents.js';

const SEEDED_BY = 'Partner.API';

function address(street: string, streetNr: string, postalCode: string, city: string) {
  return { street, streetNr, postalCode, city, countryCode: 'BE' };
}

function seedCompanies(ctx: SandboxContext, at: string): void {
  const stamp = { createdAt: at, lastModifiedAt: at, lastModifiedBy: SEEDED_BY };
  const companies = [
    {
      id: SEED.partnerCompanyId,
      erpId: 'ERP-PARTNER',
      name: 'Partner Integrations NV',
      identificationNumber: '0123456749',
      emailAddress: 'ops@partner.example',
      phoneNumber: '+3221234567',
      headAddress: address('Wetstraat', '1', '1000', 'Brussel'),
      isActive: true,
      identifiers: [{ type: 'ENTERPRISE_NUMBER', value: '0123456749' }],
      isTechnologyPartner: true,
      role: 'TECHNOLOGY_PARTNER',
      managedCompanyIds: [SEED.managedCompanyId, SEED.secondManagedCompanyId],
    },
    {
      id: SEED.managedCompanyId,
      erpId: 'ERP-MANAGED',
      name: 'Managed Client BV',
      identificationNumber: '0987654321',
      emailAddress: 'admin@managed.example',
      headAddress: address('Meir', '50', '2000', 'Antwerpen'),
      isActive: true,
      identifiers: [{ type: 'VAT_NUMBER', value: 'BE0987654321' }],
      isTechnologyPartner: false,
      role: 'MANAGED_COMPANY',
      technologyPartnerId: SEED.partnerCompanyId,
    },
    {
      id: SEED.secondManagedCompanyId,
      erpId: 'ERP-MANAGED-2',
      name: 'Second Managed Client NV',
      identificationNumber: '0876543210',
      emailAddress: 'admin@managed-2.example',
      headAddress: address('Veldstraat', '20', '9000', 'Gent'),
      isActive: true,
      identifiers: [{ type: 'VAT_NUMBER', value: 'BE0876543210' }],
      isTechnologyPartner: false,
      role: 'MANAGED_COMPANY',
      technologyPartnerId: SEED.partnerCompanyId,
    },
    {
      id: SEED.otherCompanyId,
      erpId: 'ERP-OTHER',
      name: 'Unrelated Company SA',
      headAddress: address('Place Saint-Lambert', '10', '4000', 'Liège'),
      isActive: true,
      identifiers: [{ type: 'ENTERPRISE_NUMBER', value: '0555555555' }],
      isTechnologyPartner: false,
      role: 'REGULAR',
    },
  ];
  for (const company of companies)
    ctx.store.insert('company', { ...company, ...stamp }, { companyId: company.id });

  const departments = [
    { id: SEED.partnerDepartmentId, companyId: SEED.partnerCompanyId, name: 'Main', city: 'Brussel' },
    { id: 'dep_partner_billing', companyId: SEED.partnerCompanyId, name: 'Billing', city: 'Brussel' },
    { id: SEED.managedDepartmentId, companyId: SEED.managedCompanyId, name: 'Main', city: 'Antwerpen' },
    {
      id: SEED.secondManagedDepartmentId,
      companyId: SEED.secondManagedCompanyId,
      name: 'Main',
      city: 'Gent',
    },
    { id: 'dep_other_main', companyId: SEED.otherCompanyId, name: 'Main', city: 'Liège' },
  ];
  for (const d of departments) {
    ctx.store.insert(
      'department',
      {
        id: d.id,
        companyId: d.companyId,
        erpId: `ERP-${d.id}`,
        name: d.name,
        headAddress: address('Kerkstraat', '1', '1000', d.city),
        hasSeparateInvoicing: false,
        isActive: true,
        ...stamp,
      },
      { companyId: d.companyId },
    );
  }

  const users = [
    {
      id: 'usr_partner_admin',
      companyId: SEED.partnerCompanyId,
      username: 'admin@partner.example',
      first: 'Ada',
      last: 'Admin',
      role: 'CLIENT_ADMIN',
      deps: [SEED.partnerDepartmentId, 'dep_partner_billing'],
    },
    {
      id: 'usr_partner_operator',
      companyId: SEED.partnerCompanyId,
      username: 'operator@partner.example',
      first: 'Otto',
      last: 'Operator',
      role: 'CLIENT_OPERATOR',
      deps: [SEED.partnerDepartmentId],
    },
    {
      id: 'usr_managed_admin',
      companyId: SEED.managedCompanyId,
      username: 'admin@managed.example',
      first: 'Mia',
      last: 'Manager',
      role: 'CLIENT_ADMIN',
      deps: [SEED.managedDepartmentId],
    },
    {
      id: 'usr_managed_2_admin',
      companyId: SEED.secondManagedCompanyId,
      username: 'admin@managed-2.example',
      first: 'Sam',
      last: 'Second',
      role: 'CLIENT_ADMIN',
      deps: [SEED.secondManagedDepartmentId],
    },
  ];
  for (const u of users) {
    ctx.store.insert(
      'user',
      {
        id: u.id,
        companyId: u.companyId,
        username: u.username,
        role: u.role,
        departments: u.deps,
        firstName: u.first,
        lastName: u.last,
        preferredLanguage: 'EN',
        emailAddress: u.username,
        enabled: true,
        hasQERDSMandate: false,
        hasMFALoginEnabled: false,
        modulesAccess: ['SERVICE_CONNECT'],
        ...stamp,
      },
      { companyId: u.companyId },
    );
  }
}

interface WorkflowSeed {
  id: string;
  name: string;
  source: string;
  tasks: string[];
  /** PDF input: where each channel identifier is found in the text (PDF_LABELS). */
  labels?: readonly PdfIdentifierRule[];
  companyId?: string;
  departmentId?: string;
  hasPom?: boolean;
  tracking?: boolean;
  validated?: boolean;
  enabled?: boolean;
}

/**
 * Where the seeded PDF workflows find their recipients: a line of the PDF's text that begins with
 * the label, the value after it. Samples and test PDFs carry these lines.
 */
export const PDF_LABELS = {
  email: [{ kind: 'EMAIL_ADDRESS', label: 'Email:' }],
  print: [
    { kind: 'ADDRESS_COMPANY_NAME', label: 'Addressee:' },
    { kind: 'ADDRESS_STREET', label: 'Street:' },
    { kind: 'ADDRESS_STREET_NUMBER', label: 'Street number:' },
    { kind: 'ADDRESS_POSTAL_CODE', label: 'Postal code:' },
    { kind: 'ADDRESS_CITY', label: 'City:' },
    { kind: 'ADDRESS_COUNTRY_CODE', label: 'Country:' },
  ],
  registered: [
    { kind: 'EMAIL_ADDRESS', label: 'Email:' },
    { kind: 'COMPANY_IDENTIFICATION_NUMBER', label: 'Enterprise number:' },
  ],
  docportal: [
    { kind: 'DOCPORTAL_TOKEN_SET_VALUE1', label: 'Doccle token 1:' },
    { kind: 'DOCPORTAL_TOKEN_SET_VALUE2', label: 'Doccle token 2:' },
  ],
} as const satisfies Record<string, readonly PdfIdentifierRule[]>;

const W = SEED.workflows;
const L = PDF_LABELS;
const WORKFLOW_SEEDS: WorkflowSeed[] = [
  { id: W.pdfEmail, name: 'PDF by email', source: 'PDF', tasks: ['EMAIL'], labels: L.email },
  { id: W.pdfPrint, name: 'PDF by post', source: 'PDF', tasks: ['EASY_PRINT'], labels: L.print },
  {
    id: W.pdfRegistered,
    name: 'PDF registered (ERDS, then QERDS)',
    source: 'PDF',
    tasks: ['ERDS', 'QERDS'],
    labels: L.registered,
  },
  {
    id: W.pdfDocportal,
    name: 'PDF to Doccle',
    source: 'PDF',
    tasks: ['DOCPORTAL'],
    labels: L.docportal,
  },
  { id: W.dataFile, name: 'Data file by email', source: 'DATA_FILE', tasks: ['EMAIL'] },
  { id: W.ubl, name: 'UBL over Peppol', source: 'UBL', tasks: ['PEPPOL'] },
  {
    id: W.payloadPdfPrint,
    name: 'Payload PDF by post with payment',
    source: 'PAYLOAD_PDF',
    tasks: ['EASY_PRINT'],
    hasPom: true,
  },
  { id: W.payloadWordEmail, name: 'Payload Word by email', source: 'PAYLOAD_WORD', tasks: ['EMAIL'] },
  { id: W.payloadWordQerds, name: 'Payload Word by QERDS', source: 'PAYLOAD_WORD', tasks: ['QERDS'] },
  { id: W.payloadWordEbox, name: 'Payload Word to eBox', source: 'PAYLOAD_WORD', tasks: ['EBOX'] },
  {
    id: W.payloadWordDocportal,
    name: 'Payload Word to DocPortal with invoice tracking',
    source: 'PAYLOAD_WORD',
    tasks: ['DOCPORTAL'],
    tracking: true,
  },
  {
    id: W.payloadWordPrintFr,
    name: 'Payload Word by French post',
    source: 'PAYLOAD_WORD',
    tasks: ['EASY_PRINT_FR'],
  },
  {
    id: W.notValidated,
    name: 'PDF by email (not validated)',
    source: 'PDF',
    tasks: ['EMAIL'],
    labels: L.email,
    validated: false,
  },
  {
    id: W.disabled,
    name: 'PDF by email (disabled)',
    source: 'PDF',
    tasks: ['EMAIL'],
    labels: L.email,
    enabled: false,
  },
  {
    id: W.managedPdfEmail,
    name: 'Managed company: PDF by email',
    source: 'PDF',
    tasks: ['EMAIL'],
    labels: L.email,
    companyId: SEED.managedCompanyId,
    departmentId: SEED.managedDepartmentId,
  },
  {
    id: W.secondManagedPdfEmail,
    name: 'Second managed company: PDF by email',
    source: 'PDF',
    tasks: ['EMAIL'],
    labels: L.email,
    companyId: SEED.secondManagedCompanyId,
    departmentId: SEED.secondManagedDepartmentId,
  },
];

function inputSource(type: string, labels: readonly PdfIdentifierRule[] = []): Record<string, unknown> {
  if (type === 'PDF') {
    return {
      type,
      channelIdentifiers: labels.map((l) => ({ ...l })),
      splitIdentifiers: [],
      ignoreIdentifiers: [],
      extraInfoIdentifiers: [],
      textExtractionMethod: 'TEXT_LAYER',
      sampleFile: 'sample.pdf',
    };
  }
  if (type === 'DATA_FILE') return { type, fileTypes: ['CSV', 'XML'], delimiter: ';' };
  return { type };
}

function seedWorkflows(ctx: SandboxContext, at: string): void {
  for (const w of WORKFLOW_SEEDS) {
    const companyId = w.companyId ?? SEED.partnerCompanyId;
    const record: Record<string, unknown> & { id: string } = {
      id: w.id,
      name: w.name,
      description: `Seeded workflow: ${w.name}`,
      trigger: { type: 'FILE_DROP', secondsToWait: 30 },
      tasks: w.tasks.map((type, i) => ({ type, order: i + 1 })),
      inputSource: inputSource(w.source, w.labels),
      enabled: w.enabled ?? true,
      validated: w.validated ?? true,
      requiresApproval: false,
      hasPom: w.hasPom ?? false,
      isDeleted: false,
      dateFormat: 'yyyy-MM-dd',
      companyId,
      departmentId: w.departmentId ?? SEED.partnerDepartmentId,
      version: 1,
      modelVersion: '1.0',
      createdAt: at,
      lastModifiedAt: at,
      lastModifiedBy: SEEDED_BY,
    };
    if (w.hasPom)
      record['pom'] = { language: 'EN', requestOptIn: false, qrCodePosition: 'BOTTOM_RIGHT', width: 30 };
    if (w.tracking)
      record['invoiceConfiguration'] = { enableInvoiceTracking: true, dueDateFormat: 'yyyy-MM-dd' };
    ctx.store.insert(WORKFLOW_KIND, record, { companyId });
  }
}

/** The Peppol BIS examples of shared/data, copied beside this file (`npm run build` copies them to dist). */
function peppolExampleDir(): string | undefined {
  const dir = fileURLToPath(new URL('./seed-data/peppol/', import.meta.url));
  return existsSync(dir) ? dir : undefined;
}

function seedPeppolDocuments(ctx: SandboxContext): void {
  const dir = peppolExampleDir();
  if (!dir) {
    ctx.log.warn('no Peppol example documents found; the sandbox starts without incoming documents');
    return;
  }
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.xml'))
    .sort();
  // Spread over the last hour so from/until and sort order have something to work on.
  const now = ctx.clock.now();
  files.forEach((fileName, i) => {
    const xml = readFileSync(`${dir}${fileName}`, 'utf8');
    addPeppolDocument(ctx, xml, SEED.partnerCompanyId, {
      fileName,
      receivedAt: now - (files.length - i) * 60_000,
      emit: false,
    });
  });
}

/** Fills an empty store; a store that already has companies (a restart) is left as it is. */
export function seedSandbox(ctx: SandboxContext): void {
  if (ctx.store.count('company') > 0) return;
  const at = isoTime(ctx.clock.now());
  ctx.store.transaction(() => {
    seedCompanies(ctx, at);
    seedWorkflows(ctx, at);
  });
  seedPeppolDocuments(ctx);
  ctx.log.info({ workflows: WORKFLOW_SEEDS.length }, 'sandbox seeded');
}
