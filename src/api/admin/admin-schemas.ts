/**
 * Interface B answers, parsed tolerantly like the rest of the client: unknown fields kept,
 * enum-like fields plain strings, fields the specification marks required kept required.
 */
import { z } from 'zod';
import { physicalAddressSchema, usageEventSchema } from '../../domain/wire.js';

const timestamp = z.string();
const identifier = z.looseObject({ type: z.string(), value: z.string() });

export const adminCompanySchema = z.looseObject({
  id: z.string(),
  erpId: z.string(),
  name: z.string(),
  headAddress: physicalAddressSchema,
  isActive: z.boolean(),
  identifiers: z.array(identifier),
  emailAddress: z.string().optional(),
  identificationNumber: z.string().optional(),
  phoneNumber: z.string().optional(),
  isTechnologyPartner: z.boolean().optional(),
  createdAt: timestamp,
  lastModifiedAt: timestamp,
  lastModifiedBy: z.string(),
});
export type AdminCompany = z.infer<typeof adminCompanySchema>;

export const companyListItemSchema = adminCompanySchema.omit({ isTechnologyPartner: true }).extend({
  role: z.string(),
  technologyPartnerId: z.string().optional(),
  managedCompanyIds: z.array(z.string()).optional(),
});
export type CompanyListItem = z.infer<typeof companyListItemSchema>;

export const adminDepartmentSchema = z.looseObject({
  id: z.string(),
  companyId: z.string(),
  erpId: z.string(),
  name: z.string(),
  headAddress: physicalAddressSchema,
  hasSeparateInvoicing: z.boolean(),
  isActive: z.boolean(),
  emailAddress: z.string().optional(),
  identificationNumber: z.string().optional(),
  phoneNumber: z.string().optional(),
  createdAt: timestamp,
  lastModifiedAt: timestamp,
  lastModifiedBy: z.string(),
});
export type AdminDepartment = z.infer<typeof adminDepartmentSchema>;

export const adminUserSchema = z.looseObject({
  id: z.string(),
  companyId: z.string(),
  username: z.string(),
  role: z.string(),
  departments: z.array(z.string()),
  firstName: z.string(),
  lastName: z.string(),
  preferredLanguage: z.string(),
  emailAddress: z.string(),
  hasMFALoginEnabled: z.boolean(),
  hasQERDSMandate: z.boolean(),
  modulesAccess: z.array(z.string()),
  lastModifiedBy: z.string(),
  enabled: z.boolean(),
  createdAt: timestamp,
  lastModifiedAt: timestamp,
});
export type AdminUser = z.infer<typeof adminUserSchema>;

/** Interface B pages: `cursor` is opaque and absent (or null) on the last page. */
export function cursorPageSchema<T extends z.ZodTypeAny>(item: T) {
  return z.looseObject({ items: z.array(item), cursor: z.string().optional().nullable() });
}

export const technologyPartnersSchema = z.looseObject({
  companyId: z.string(),
  technologyPartnerCompanyIds: z.array(z.string()),
});
export const managedCompaniesSchema = z.looseObject({
  companyId: z.string(),
  managedCompanyIds: z.array(z.string()),
});
export const successSchema = z.looseObject({ success: z.boolean() });

export const reportSchema = z.looseObject({
  id: z.string(),
  companyId: z.string(),
  departmentId: z.string().optional(),
  reportType: z.string(),
  status: z.string(),
  from: timestamp.optional(),
  until: timestamp.optional(),
  fileName: z.string().optional(),
  createdAt: timestamp.optional(),
});
export type Report = z.infer<typeof reportSchema>;

/** 201 of report creation: the pre-signed URL record. */
export const reportCreatedSchema = z.looseObject({
  id: z.string(),
  url: z.string().url(),
  expiresAt: timestamp.optional(),
});
export type ReportCreated = z.infer<typeof reportCreatedSchema>;

/** download-url answers a bare string; a `{url}` record is accepted too. */
export const reportDownloadUrlSchema = z
  .union([z.string().url(), z.looseObject({ url: z.string().url() })])
  .transform((v) => (typeof v === 'string' ? v : v.url));

export const reportSearchResultSchema = z.looseObject({ items: z.array(reportSchema) });

export const newsItemSchema = z.looseObject({
  id: z.string(),
  title: z.string(),
  body: z.string(),
  language: z.string(),
  publishFrom: timestamp.optional(),
  publishUntil: timestamp.optional(),
  createdAt: timestamp.optional(),
});
export type NewsItem = z.infer<typeof newsItemSchema>;

export const usageDetailsPageSchema = z.looseObject({
  items: z.array(usageEventSchema),
  nextCursor: z.string().optional().nullable(),
});

export const adminInfoSchema = z.looseObject({ name: z.string().optional(), version: z.string().optional() });
