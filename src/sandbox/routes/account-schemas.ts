/** Request bodies of the Interface A account operations (spec: Interface A and B records). */
import { z } from 'zod';

export const COMPANY_IDENTIFIER_TYPES = [
  'ENTERPRISE_NUMBER',
  'VAT_NUMBER',
  'DUNS',
  'GLN',
  'LEITWEG_ID',
  'CODE_ROUTAGE',
  'SIRET_NUMBER',
  'NIP',
  'BANK_NAME',
  'BIC',
  'IBAN',
  'KVK_NUMBER',
  'OIN_NUMBER',
  'CFI',
  'PEC',
  'CODDEST',
  'CUU',
] as const;

const text = z.string().min(1);

export const physicalAddressBody = z.object({
  street: text,
  streetNr: text,
  postalCode: text,
  box: z.string().optional(),
  city: text,
  countryCode: text,
  addressAdditionalLine: z.string().optional(),
});

/** Interface B company create body without isTechnologyPartner (decisions, Accounts). */
export const companyCreateBody = z.object({
  emailAddress: z.email().optional(),
  id: text.optional(),
  erpId: text,
  identificationNumber: z.string().optional(),
  name: text,
  headAddress: physicalAddressBody,
  phoneNumber: z.string().optional(),
  isActive: z.boolean(),
  lastModifiedBy: text.optional(),
  identifiers: z.array(z.object({ type: z.enum(COMPANY_IDENTIFIER_TYPES), value: text })),
});
export const companyUpdateBody = companyCreateBody.omit({ id: true }).partial();

export const departmentCreateBody = z.object({
  identificationNumber: z.string().optional(),
  name: text,
  headAddress: physicalAddressBody,
  emailAddress: z.email().optional(),
  phoneNumber: z.string().optional(),
  hasSeparateInvoicing: z.boolean(),
  isActive: z.boolean(),
});
export const departmentUpdateBody = departmentCreateBody.partial();

export const USER_ROLES_A = [
  'CLIENT_VIEWER',
  'CLIENT_OPERATOR',
  'CLIENT_DEPARTMENT_ADMIN',
  'CLIENT_ADMIN',
] as const;

export const userCreateBody = z.object({
  username: text,
  role: z.enum(USER_ROLES_A),
  departments: z.array(text),
  firstName: text,
  lastName: text,
  preferredLanguage: z.enum(['EN', 'NL', 'FR']),
  emailAddress: z.email(),
  enabled: z.boolean(),
  hasQERDSMandate: z.boolean(),
});
export const userUpdateBody = userCreateBody.partial();
