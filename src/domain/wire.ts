/**
 * The wire format of the Document Exchange Service, as the specification and our decisions
 * (shared/spec/decisions.md) define it. The sandbox builds these records; the client parses them
 * tolerantly: unknown fields are kept (looseObject) and enum-like fields are plain strings, checked
 * against the known values with `unknownValue()` so a new status is logged, never fatal.
 */
import { z } from 'zod';

export const TASK_KINDS = [
  'EASY_PRINT',
  'EASY_PRINT_FR',
  'EMAIL',
  'ERDS',
  'QERDS',
  'EBOX',
  'DOCPORTAL',
  'PEPPOL',
] as const;

export const INPUT_SOURCE_TYPES = ['PDF', 'PAYLOAD_PDF', 'PAYLOAD_WORD', 'DATA_FILE', 'UBL'] as const;

export const JOB_STATUSES = ['AWAITING_FILE_UPLOAD', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
/** The other name the specification uses for the waiting state. */
export const JOB_STATUS_ALIASES: Record<string, (typeof JOB_STATUSES)[number]> = {
  AWAITING_FOR_FILE: 'AWAITING_FILE_UPLOAD',
};

export const TECHNICAL_STATUSES = ['IN_PROGRESS', 'SUCCESS', 'WARNING', 'FAILURE'] as const;
export const BUSINESS_STATUSES = [
  'NOT_STARTED',
  'SCHEDULED_FOR_EXECUTION',
  'IN_PROGRESS',
  'SUCCESS',
  'FAILURE',
  'REJECTED',
] as const;
export const DOCUMENT_TYPES = ['ORIGINAL', 'DELIVERY_PROOF', 'SUBMISSION_REPORT', 'RETURN_RECEIPT'] as const;
export const WEBHOOK_EVENT_TYPES = [
  'job.status.changed',
  'sending.event.status.changed',
  'sending.event.file.ready',
  'peppol.document.received',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const CHANNEL_IDENTIFIER_KINDS = [
  'ADDRESS',
  'ADDRESS_FIRST_NAME',
  'ADDRESS_LAST_NAME',
  'ADDRESS_COMPANY_NAME',
  'ADDRESS_STREET',
  'ADDRESS_STREET_NUMBER',
  'ADDRESS_BOX',
  'ADDRESS_PO_BOX',
  'ADDRESS_POSTAL_CODE',
  'ADDRESS_CITY',
  'ADDRESS_COUNTRY_CODE',
  'EMAIL_ADDRESS',
  'PHONE_NUMBER',
  'LAST_NAME',
  'FIRST_NAME',
  'BIRTH_DATE',
  'INVOICE_AMOUNT',
  'INVOICE_DESCRIPTION',
  'INVOICE_DUE_DATE',
  'INVOICE_PAY_LINK',
  'INVOICE_PAY_LINK_SHORT',
  'INVOICE_COMMUNICATION',
  'INVOICE_PAYMENT_DATE',
  'POM_OPT_IN_EMAIL',
  'COMPANY_IDENTIFICATION_NUMBER',
  'NATIONAL_REGISTER_NUMBER',
  'EBOX_RECIPIENT_PARTITION',
  'INVOICE_REFERENCE',
  'DOCPORTAL_TOKEN_SET_VALUE1',
  'DOCPORTAL_TOKEN_SET_VALUE2',
  'DOCPORTAL_RECEIVER_ID',
  'DOCPORTAL_TOKEN_SET_START_DATE',
  'DOCPORTAL_TOKEN_SET_END_DATE',
  'DOCCLE_TOKEN_SET_VALUE1',
  'DOCCLE_TOKEN_SET_VALUE2',
  'DOCCLE_RECEIVER_ID',
  'DOCCLE_TOKEN_SET_START_DATE',
  'DOCCLE_TOKEN_SET_END_DATE',
  'PEPPOL_SENDER_PARTICIPANT_ID',
  'PEPPOL_RECEIVER_PARTICIPANT_ID',
  'PEPPOL_DOCUMENT_ID',
  'PEPPOL_ISSUE_DATE',
  'PEPPOL_DOCUMENT_TYPE',
] as const;

/**
 * The live service's reference spells the DOCPORTAL task's kinds DOCCLE_* (it delivers to Doccle);
 * both spellings are the same kind (decisions.md, Names of the live service). Rules compare the
 * specification's spelling; requests keep the one the user wrote.
 */
const DOCCLE_PREFIX = 'DOCCLE_';
export function canonicalKind(kind: string): string {
  return kind.startsWith(DOCCLE_PREFIX) ? `DOCPORTAL_${kind.slice(DOCCLE_PREFIX.length)}` : kind;
}

/** Returns the value when it is not one of the known ones, for a "not recognised" log line. */
export function unknownValue(value: string | undefined, known: readonly string[]): string | undefined {
  return value !== undefined && !known.includes(value) ? value : undefined;
}

export function normaliseJobStatus(status: string): string {
  return JOB_STATUS_ALIASES[status] ?? status;
}

const timestamp = z.string();

export const problemSchema = z.looseObject({
  type: z.string().optional(),
  title: z.string().optional(),
  status: z.number().optional(),
  detail: z.string().optional(),
  errors: z.array(z.looseObject({ field: z.string().optional(), message: z.string() })).optional(),
});

export const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z.coerce.number().positive(),
  token_type: z.string().optional(),
});

export const issueSchema = z.looseObject({
  code: z.string().optional(),
  message: z.string(),
  taskType: z.string().optional(),
});
export type Issue = z.infer<typeof issueSchema>;

export const jobSchema = z.looseObject({
  id: z.string(),
  name: z.string().optional(),
  workflowId: z.string().optional(),
  companyId: z.string().optional(),
  departmentId: z.string().optional(),
  filename: z.string().optional(),
  status: z.string(),
  startDate: timestamp.optional(),
  createdAt: timestamp.optional(),
  lastModifiedAt: timestamp.optional(),
  uploadExpiresAt: timestamp.optional(),
  sendingEventCount: z.number().optional(),
  errorList: z.array(issueSchema).optional(),
});
export type Job = z.infer<typeof jobSchema>;

/** 201 answer of POST /jobs/single-file and /jobs/payload-pdf; `jobId` accepted for `id`. */
export const uploadJobCreatedSchema = z
  .looseObject({
    id: z.string().optional(),
    jobId: z.string().optional(),
    fileUploadUrl: z.string().url(),
    uploadExpiresAt: timestamp.optional(),
  })
  .refine((v) => v.id ?? v.jobId, { message: 'answer has neither id nor jobId' })
  .transform((v) => ({ ...v, id: (v.id ?? v.jobId) as string }));

export const payloadWordCreatedSchema = z
  .looseObject({ id: z.string().optional(), jobId: z.string().optional() })
  .refine((v) => v.id ?? v.jobId, { message: 'answer has neither id nor jobId' })
  .transform((v) => ({ ...v, id: (v.id ?? v.jobId) as string }));

export const documentSchema = z.looseObject({
  fileReference: z.string(),
  name: z.string().optional(),
  type: z.string(),
  contentType: z.string().optional(),
  size: z.number().optional(),
  createdAt: timestamp.optional(),
});
export type SendingEventDocument = z.infer<typeof documentSchema>;

export const nameValueSchema = z.looseObject({ name: z.string(), value: z.unknown() });

export const taskDetailSchema = z.looseObject({
  taskType: z.string(),
  order: z.number().optional(),
  status: z.string().optional(),
  startedAt: timestamp.optional().nullable(),
  endedAt: timestamp.optional().nullable(),
  errors: z.array(issueSchema).optional(),
});

export const sendingEventSchema = z.looseObject({
  id: z.string(),
  jobId: z.string(),
  jobName: z.string().optional(),
  sendingSourceFileReference: z.string().optional(),
  jobAuthor: z.string().optional(),
  startDate: timestamp.optional().nullable(),
  endDate: timestamp.optional().nullable(),
  executionDateUtc: timestamp.optional().nullable(),
  properties: z.array(nameValueSchema).optional(),
  extraInfo: z.array(nameValueSchema).optional(),
  workflowName: z.string().optional(),
  workflowId: z.string().optional(),
  status: z.string(),
  businessStatus: z.string(),
  approval: z.looseObject({}).optional().nullable(),
  errorList: z.array(issueSchema).optional(),
  warningList: z.array(issueSchema).optional(),
  invoiceId: z.string().optional(),
  dataRetention: z.looseObject({ periodInSeconds: z.number().optional() }).optional(),
  documents: z.array(documentSchema).optional(),
  taskDetails: z.array(taskDetailSchema).optional(),
  resendOf: z.string().optional().nullable(),
});
export type SendingEvent = z.infer<typeof sendingEventSchema>;

const FINAL_BUSINESS = new Set(['SUCCESS', 'FAILURE', 'REJECTED']);
/** Decisions, Sending events: final = business SUCCESS/FAILURE/REJECTED with a settled technical status. */
export function isFinalSendingEvent(event: { status: string; businessStatus: string }): boolean {
  return FINAL_BUSINESS.has(event.businessStatus) && event.status !== 'IN_PROGRESS';
}

export const downloadUrlSchema = z.looseObject({ url: z.string().url(), expiresAt: timestamp.optional() });

export const taskSchema = z.looseObject({ type: z.string(), order: z.number().optional() });

export const workflowSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().optional(),
  enabled: z.boolean(),
  validated: z.boolean(),
  requiresApproval: z.boolean().optional(),
  trigger: z.looseObject({ type: z.string().optional() }).optional(),
  tasks: z.array(taskSchema),
  inputSource: z.looseObject({ type: z.string() }),
  hasPom: z.boolean().optional(),
  pom: z.looseObject({}).optional().nullable(),
  invoiceConfiguration: z
    .looseObject({ enableInvoiceTracking: z.boolean().optional() })
    .optional()
    .nullable(),
  sFTPFolderName: z.string().optional(),
  isDeleted: z.boolean().optional(),
  dateFormat: z.string().optional(),
  companyId: z.string(),
  departmentId: z.string(),
  version: z.number().optional(),
  modelVersion: z.string().optional(),
  createdAt: timestamp.optional(),
  lastModifiedAt: timestamp.optional(),
  lastModifiedBy: z.string().optional(),
});
export type Workflow = z.infer<typeof workflowSchema>;

export const peppolDocumentSchema = z.looseObject({
  id: z.string(),
  senderId: z.string(),
  receiverId: z.string().optional(),
  documentType: z.string().optional(),
  documentNumber: z.string().optional(),
  issueDate: z.string().optional(),
  fileName: z.string().optional(),
  size: z.number().optional(),
  createdAt: timestamp,
  lastModifiedAt: timestamp.optional(),
});
export type PeppolDocument = z.infer<typeof peppolDocumentSchema>;

export const webhookSubscriptionSchema = z.looseObject({
  id: z.string(),
  url: z.string(),
  eventTypes: z.array(z.string()),
  /** The internal name (the live reference's field; decisions, Names of the live service). */
  name: z.string().optional(),
  enabled: z.boolean().optional(),
  description: z.string().optional().nullable(),
  createdAt: timestamp.optional(),
  lastModifiedAt: timestamp.optional(),
  secret: z.string().optional(),
});
export type WebhookSubscription = z.infer<typeof webhookSubscriptionSchema>;

export const webhookDeliverySchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  timestamp: z.string(),
  companyId: z.string().optional(),
  data: z.record(z.string(), z.unknown()),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const physicalAddressSchema = z.looseObject({
  street: z.string(),
  streetNr: z.string(),
  postalCode: z.string(),
  box: z.string().optional(),
  city: z.string(),
  countryCode: z.string(),
  addressAdditionalLine: z.string().optional(),
});

export const identifierSchema = z.looseObject({ type: z.string(), value: z.string() });

export const companySchema = z.looseObject({
  id: z.string(),
  erpId: z.string().optional(),
  name: z.string(),
  headAddress: physicalAddressSchema.optional(),
  isActive: z.boolean().optional(),
  identifiers: z.array(identifierSchema).optional(),
  role: z.string().optional(),
  technologyPartnerId: z.string().optional(),
  managedCompanyIds: z.array(z.string()).optional(),
  createdAt: timestamp.optional(),
  lastModifiedAt: timestamp.optional(),
  lastModifiedBy: z.string().optional(),
});

export const departmentSchema = z.looseObject({
  id: z.string(),
  companyId: z.string(),
  erpId: z.string().optional(),
  name: z.string(),
  headAddress: physicalAddressSchema.optional(),
  hasSeparateInvoicing: z.boolean().optional(),
  isActive: z.boolean().optional(),
  createdAt: timestamp.optional(),
  lastModifiedAt: timestamp.optional(),
  lastModifiedBy: z.string().optional(),
});

export const userSchema = z.looseObject({
  id: z.string(),
  companyId: z.string(),
  username: z.string(),
  role: z.string(),
  departments: z.array(z.string()),
  firstName: z.string(),
  lastName: z.string(),
  preferredLanguage: z.string(),
  emailAddress: z.string(),
  enabled: z.boolean(),
  hasQERDSMandate: z.boolean().optional(),
  hasMFALoginEnabled: z.boolean().optional(),
  createdAt: timestamp.optional(),
  lastModifiedAt: timestamp.optional(),
  lastModifiedBy: z.string().optional(),
});

export const usageSchema = z.looseObject({
  companyId: z.string(),
  from: z.string(),
  until: z.string(),
  totals: z.array(z.looseObject({ channel: z.string(), unit: z.string(), count: z.number() })),
});

export const usageEventSchema = z.looseObject({
  id: z.string(),
  timestamp: z.string(),
  companyId: z.string(),
  departmentId: z.string().optional(),
  jobId: z.string().optional(),
  sendingEventId: z.string().optional(),
  channel: z.string(),
  unit: z.string(),
  quantity: z.number(),
});

export const healthSchema = z.looseObject({
  status: z.string(),
  version: z.string().optional(),
  time: z.string().optional(),
});

/** `{items, totalItems}` page of Interface A lists. */
export function pageSchema<T extends z.ZodTypeAny>(item: T) {
  return z.looseObject({ items: z.array(item), totalItems: z.number().optional() });
}

/** Payload job request: POST /jobs/payload-word and /jobs/payload-pdf. */
export const channelIdentifierSchema = z.looseObject({
  kind: z.string(),
  value: z.string(),
  mustBeEncrypted: z.boolean().optional(),
  /** Another form of the reference names the flag isEncrypted; same meaning. */
  isEncrypted: z.boolean().optional(),
});
export type ChannelIdentifier = z.infer<typeof channelIdentifierSchema>;

export const extraInfoIdentifierSchema = z.looseObject({
  name: z.string(),
  value: z.string(),
  mustBeEncrypted: z.boolean().optional(),
  isEncrypted: z.boolean().optional(),
});

export const payloadJobRequestSchema = z.looseObject({
  workflowId: z.string().min(1),
  jobName: z.string().min(1),
  filename: z.string().min(1),
  sendingEventExecutionDateUtc: z.string().optional(),
  payload: z.looseObject({
    channelIdentifiers: z.array(channelIdentifierSchema),
    extraInfoIdentifiers: z.array(extraInfoIdentifierSchema),
    templateData: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type PayloadJobRequest = z.infer<typeof payloadJobRequestSchema>;

export const singleFileJobRequestSchema = z.looseObject({
  workflowId: z.string().min(1),
  filename: z.string().min(1),
  jobName: z.string().optional(),
});
export type SingleFileJobRequest = z.infer<typeof singleFileJobRequestSchema>;
