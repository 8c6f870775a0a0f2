import type { Workflow } from '../../../src/domain/wire.js';

/** A workflow record shaped like the sandbox's seeded ones, for pure tests. */
export function workflow(
  id: string,
  source: string,
  tasks: string[],
  extra: { hasPom?: boolean; tracking?: boolean; enabled?: boolean } = {},
): Workflow {
  return {
    id,
    name: id,
    enabled: extra.enabled ?? true,
    validated: true,
    tasks: tasks.map((type, i) => ({ type, order: i + 1 })),
    inputSource: { type: source },
    hasPom: extra.hasPom ?? false,
    ...(extra.tracking ? { invoiceConfiguration: { enableInvoiceTracking: true } } : {}),
    companyId: 'cmp_partner',
    departmentId: 'dep_partner_main',
  };
}

export const EMAIL_WORD = workflow('wf_word_email', 'PAYLOAD_WORD', ['EMAIL']);
export const PRINT_WORD = workflow('wf_word_print', 'PAYLOAD_WORD', ['EASY_PRINT_FR']);
export const PRINT_PDF_POM = workflow('wf_pdf_print', 'PAYLOAD_PDF', ['EASY_PRINT'], { hasPom: true });
