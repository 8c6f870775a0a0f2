/** Request bodies of Interface B (spec: Interface B records; decisions: reports, news items). */
import type { PhysicalAddress } from '../accounts-api.js';

export type CompanyRole = 'REGULAR' | 'TECHNOLOGY_PARTNER' | 'MANAGED_COMPANY';
export type AdminUserRole =
  | 'CLIENT_VIEWER'
  | 'CLIENT_OPERATOR'
  | 'CLIENT_DEPARTMENT_ADMIN'
  | 'CLIENT_ADMIN'
  | 'SUPER_USER';
export type Language = 'EN' | 'NL' | 'FR';
export type ReportType = 'USAGE' | 'SENDINGS' | 'INVOICES';

export interface AdminCompanyCreate {
  erpId: string;
  name: string;
  headAddress: PhysicalAddress;
  isActive: boolean;
  identifiers: { type: string; value: string }[];
  id?: string;
  emailAddress?: string;
  identificationNumber?: string;
  phoneNumber?: string;
  /** Defaults to Partner.API. */
  lastModifiedBy?: string;
  isTechnologyPartner?: boolean;
}
export type AdminCompanyUpdate = Partial<Omit<AdminCompanyCreate, 'id'>>;

export interface AdminDepartmentCreate {
  companyId: string;
  erpId: string;
  name: string;
  headAddress: PhysicalAddress;
  hasSeparateInvoicing: boolean;
  isActive: boolean;
  id?: string;
  emailAddress?: string;
  identificationNumber?: string;
  phoneNumber?: string;
  lastModifiedBy?: string;
}
export type AdminDepartmentUpdate = Partial<Omit<AdminDepartmentCreate, 'id'>>;

export interface AdminUserCreate {
  companyId: string;
  username: string;
  role: AdminUserRole;
  departments: string[];
  firstName: string;
  lastName: string;
  preferredLanguage: Language;
  emailAddress: string;
  hasMFALoginEnabled: boolean;
  hasQERDSMandate: boolean;
  modulesAccess: ('SERVICE_CONNECT' | 'SERVICE_PORTAL' | 'OMNI')[];
  lastModifiedBy: string;
  enabled: boolean;
  id?: string;
}
export type AdminUserUpdate = Partial<Omit<AdminUserCreate, 'id'>>;

export interface ReportCreate {
  companyId: string;
  reportType: ReportType;
  from: string;
  until: string;
  departmentId?: string;
  id?: string;
}

export interface ReportSearch {
  reportType?: ReportType;
  departmentId?: string;
  from?: string;
  until?: string;
}

export interface NewsItemCreate {
  title: string;
  body: string;
  language: Language;
  publishFrom?: string;
  publishUntil?: string;
}
