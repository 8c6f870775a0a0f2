export type {
  AdminCompanyCreate,
  AdminCompanyUpdate,
  AdminDepartmentCreate,
  AdminDepartmentUpdate,
  AdminUserCreate,
  AdminUserRole,
  AdminUserUpdate,
  CompanyRole,
  Language,
  NewsItemCreate,
  ReportCreate,
  ReportSearch,
  ReportType,
} from './admin-bodies.js';
export { AdminClient, type AdminClientOptions, createAdminAgent } from './admin-client.js';
export type { AdminUsageQuery } from './admin-reports.js';
export type { AdminListQuery } from './admin-resources.js';
export type {
  AdminCompany,
  AdminDepartment,
  AdminUser,
  CompanyListItem,
  NewsItem,
  Report,
  ReportCreated,
} from './admin-schemas.js';
