/**
 * The managed company (`x-managed-company-id`) of a drop folder's jobs, read live: a folder added
 * or changed by a reload has its runtime in `plan.running` (which reload updates); a folder
 * stopped since keeps the company it last ran with (its jobs are still followed), and a folder
 * never seen running falls back to the start-up configuration.
 */
import { type CompanyEntry, companyEntry } from '../config/index.js';
import type { FolderPlan } from './folders.js';

type FolderCompany = {
  name: string;
  managedCompanyId?: string | undefined;
  routes?: ReadonlyArray<{ managedCompanyId?: string | undefined }> | undefined;
  companies?: Readonly<Record<string, CompanyEntry>> | undefined;
};

/** Every company a folder may send as: its own, its routes' and its companies table's. */
function companiesOf(folder: FolderCompany): string[] {
  return [
    ...(folder.managedCompanyId ? [folder.managedCompanyId] : []),
    ...(folder.routes ?? []).flatMap((r) => (r.managedCompanyId ? [r.managedCompanyId] : [])),
    ...Object.values(folder.companies ?? {}).map((entry) => companyEntry(entry).managedCompanyId),
  ];
}

export interface CompanyLookup {
  companyOf(folder: string): string | undefined;
  /**
   * Every company a folder of this process ran with, its routes' and companies tables' included
   * (for a lookup that names no folder).
   */
  companies(): string[];
}

export function liveCompanies(
  plan: Pick<FolderPlan, 'running'>,
  startFolders: readonly FolderCompany[],
): CompanyLookup {
  const seen = new Map<string, string | undefined>(startFolders.map((f) => [f.name, f.managedCompanyId]));
  const routed = new Map<string, string[]>(startFolders.map((f) => [f.name, companiesOf(f)]));
  // A few folders: looking at all of them per call is cheaper than any bookkeeping in reload.
  const refresh = () => {
    for (const [name, runtime] of plan.running) {
      seen.set(name, runtime.config.managedCompanyId);
      routed.set(name, companiesOf(runtime.config));
    }
  };
  return {
    companyOf(folder) {
      refresh();
      return seen.get(folder);
    },
    companies() {
      refresh();
      return [
        ...new Set([
          ...[...seen.values()].filter((c): c is string => c !== undefined),
          ...[...routed.values()].flat(),
        ]),
      ];
    },
  };
}
