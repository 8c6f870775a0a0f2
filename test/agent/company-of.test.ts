import { describe, expect, it } from 'vitest';
import { liveCompanies } from '../../src/agent/company-of.js';
import type { FolderPlan } from '../../src/agent/folders.js';
import type { FolderRuntime } from '../../src/pipeline/types.js';

// Only the folder config is read; the rest of a runtime does not matter here.
const runtime = (name: string, managedCompanyId?: string) =>
  ({ config: { name, ...(managedCompanyId ? { managedCompanyId } : {}) } }) as unknown as FolderRuntime;

describe('managed company of a folder for the follower', () => {
  it('follows a folder added by reload with its own company, and keeps it after the folder stops', () => {
    const plan: FolderPlan = { running: new Map([['pdf', runtime('pdf')]]), stopped: [] };
    const lookup = liveCompanies(plan, [{ name: 'pdf' }]);
    expect(lookup.companyOf('acme')).toBeUndefined();

    // What Agent.addFolder does on a reload that adds `acme`.
    plan.running.set('acme', runtime('acme', 'mc_acme'));
    expect(lookup.companyOf('acme')).toBe('mc_acme');
    expect(lookup.companies()).toEqual(['mc_acme']);

    // Removed by a later reload: its jobs are still followed with its company.
    plan.running.delete('acme');
    expect(lookup.companyOf('acme')).toBe('mc_acme');
  });

  it('takes a company changed by reload over the start-up one', () => {
    const plan: FolderPlan = { running: new Map([['pdf', runtime('pdf', 'mc_old')]]), stopped: [] };
    const lookup = liveCompanies(plan, [{ name: 'pdf', managedCompanyId: 'mc_old' }]);
    plan.running.set('pdf', runtime('pdf', 'mc_new'));
    expect(lookup.companyOf('pdf')).toBe('mc_new');
  });

  it("names every company a folder may send as among the companies: its routes' and its companies table's (an entry with its own workflow too)", () => {
    const routed = {
      config: {
        name: 'routed',
        routes: [{ managedCompanyId: 'mc_route' }, {}],
        companies: { acme: 'mc_acme', globex: { managedCompanyId: 'mc_globex', workflowId: 'wf_globex' } },
      },
    } as unknown as FolderRuntime;
    const plan: FolderPlan = { running: new Map([['routed', routed]]), stopped: [] };
    const lookup = liveCompanies(plan, [{ name: 'routed' }]);
    expect(lookup.companyOf('routed')).toBeUndefined();
    expect(lookup.companies()).toEqual(['mc_route', 'mc_acme', 'mc_globex']);
  });
});
