/** Request bodies of Interface B (spec: Interface B records; decisions: reports, news items). */
import { z } from 'zod';
import { companyCreateBody, physicalAddressBody } from '../routes/account-schemas.js';

const text = z.string().min(1);
const dateTime = z.iso.datetime({ offset: true });

export const DEFAULT_MODIFIER = 'Partner.API';
export const COMPANY_ROLES = ['REGULAR', 'TECHNOLOGY_PARTNER', 'MANAGED_COMPANY'] as const;
export const USER_ROLES_B = [
  'CLIENT_VIEWER',
  'CLIENT_OPERATOR',
  'CLIENT_DEPARTMENT_ADMIN',
  'CLIENT_ADMIN',
  'SUPER_USER',
] as const;
export const MODULES = ['SERVICE_CONNECT', 'SERVICE_PORTAL', 'OMNI'] as const;
export const LANGUAGES = ['EN', 'NL', 'FR'] as const;
export const REPORT_TYPES = ['USAGE', 'SENDINGS', 'INVOICES'] as const;

export const adminCompanyCreateBody = companyCreateBody.extend({
  isTechnologyPartner: z.boolean().optional(),
});
export const adminCompanyUpdateBody = adminCompanyCreateBody.omit({ id: true }).partial();

export const adminDepartmentCreateBody = z.object({
  emailAddress: z.email().optional(),
  id: text.optional(),
  companyId: text,
  erpId: text,
  identificationNumber: z.string().optional(),
  name: text,
  headAddress: physicalAddressBody,
  phoneNumber: z.string().optional(),
  hasSeparateInvoicing: z.boolean(),
  isActive: z.boolean(),
  lastModifiedBy: text.optional(),
});
export const adminDepartmentUpdateBody = adminDepartmentCreateBody.omit({ id: true }).partial();

export const adminUserCreateBody = z.object({
  id: text.optional(),
  companyId: text,
  username: text,
  role: z.enum(USER_ROLES_B),
  departments: z.array(text),
  firstName: text,
  lastName: text,
  preferredLanguage: z.enum(LANGUAGES),
  emailAddress: z.email(),
  hasMFALoginEnabled: z.boolean(),
  hasQERDSMandate: z.boolean(),
  modulesAccess: z.array(z.enum(MODULES)),
  lastModifiedBy: text,
  enabled: z.boolean(),
});
export const adminUserUpdateBody = adminUserCreateBody.omit({ id: true }).partial();

export const reportCreateBody = z.object({
  companyId: text,
  departmentId: text.optional(),
  id: text.optional(),
  reportType: z.enum(REPORT_TYPES),
  from: dateTime,
  until: dateTime,
});

export const reportSearchBody = z.object({
  reportType: z.enum(REPORT_TYPES).optional(),
  departmentId: text.optional(),
  from: dateTime.optional(),
  until: dateTime.optional(),
});

export const newsItemCreateBody = z.object({
  title: text,
  body: text,
  language: z.enum(LANGUAGES),
  publishFrom: dateTime.optional(),
  publishUntil: dateTime.optional(),
});
