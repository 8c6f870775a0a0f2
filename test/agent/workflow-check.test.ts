import { describe, expect, it } from 'vitest';
import { checkFolderWorkflow } from '../../src/agent/workflow-check.js';
import { EMAIL_WORD, workflow } from '../pipeline/payload/workflows.js';

const PDF_EMAIL = workflow('wf_pdf_email', 'PDF', ['EMAIL']);
const sendAt = { delayMs: 7_200_000 };

describe('the start-up workflow check of a folder with sendAt', () => {
  it('stops a single-file folder with sendAt, naming the folder: a single-file job carries no execution date', () => {
    const check = checkFolderWorkflow(
      { name: 'pdf', workflowId: PDF_EMAIL.id, mode: undefined, sendAt },
      PDF_EMAIL,
    );
    expect(check).toEqual({
      ok: false,
      reason:
        'folder pdf: sendAt is for payload folders (payload-pdf, payload-word); a single-file job carries no execution date (workflow wf_pdf_email takes single files)',
    });
  });

  it('runs a payload-word folder with sendAt', () => {
    expect(
      checkFolderWorkflow(
        { name: 'letters', workflowId: EMAIL_WORD.id, mode: undefined, sendAt },
        EMAIL_WORD,
      ),
    ).toEqual({ ok: true, mode: 'payload-word' });
  });
});
