/**
 * Interface B answers, parsed tolerantly like the rest of the client: unknown fields kept,
 * enum-like fields plain strings, fields the specification marks required kept required.
 */
import { z } from 'zod';
import {
  companySchema,
  departmentSchema,
  identifierSchema,
  physicalAddressSchema,
  userSchema,
} from '../../domain/wire.js';

const timestamp = z.string();

/**
 * Interface B's companies and departments are Interface A's records with these fields always
 * present, and contact fields besides.
 */
const adminRecordFields = {
  erpId: z.string(),
  headAddress: physicalAddressSchema,
  isActive: z.boolean(),
  emailAddress: z.string().optional(),
  identificationNumber: z.string().optional(),
  phoneNumber: z.string().optional(),
  createdAt: timestamp,
  lastModifiedAt: timestamp,
  lastModifiedBy: z.string(),
};

export const companyListItemSchema = companySchema.extend({
  ...adminRecordFields,
  identifiers: z.array(identifierSchema),
  role: z.string(),
});
export type CompanyListItem = z.infer<typeof companyListItemSchema>;

export const adminCompanySchema = companyListItemSchema
  .omit({ role: true, technologyPartnerId: true, managedCompanyIds: true })
  .extend({ isTechnologyPartner: z.boolean().optional() });
export type AdminCompany = z.infer<typeof adminCompanySchema>;

export const adminDepartmentSchema = departmentSchema.extend({
  ...adminRecordFields,
  hasSeparateInvoicing: z.boolean(),
});
export type AdminDepartment = z.infer<typeof adminDepartmentSchema>;

/** Interface A's user with its flags and stamps always present, and the modules it may use. */
export const adminUserSchema = userSchema.extend({
  hasMFALoginEnabled: z.boolean(),
  hasQERDSMandate: z.boolean(),
  modulesAccess: z.array(z.string()),
  createdAt: timestamp,
  lastModifiedAt: timestamp,
  lastModifiedBy: z.string(),
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

export const adminInfoSchema = z.looseObject({ name: z.string().optional(), version: z.string().optional() });
