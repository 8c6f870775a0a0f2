/**
 * Ids of what a new sandbox is seeded with. Tests, samples and the generated agent config name
 * these, so they are fixed.
 */
export const SEED = {
  /** The company the generated client credentials belong to: a technology partner. */
  partnerCompanyId: 'cmp_partner',
  partnerDepartmentId: 'dep_partner_main',
  /** A company managed by the partner (x-managed-company-id allowed). */
  managedCompanyId: 'cmp_managed',
  managedDepartmentId: 'dep_managed_main',
  /**
   * A second company managed by the partner, with its own department, user and workflow: what one
   * managed company creates (jobs, sending events, proofs) the other does not see.
   */
  secondManagedCompanyId: 'cmp_managed_2',
  secondManagedDepartmentId: 'dep_managed_2_main',
  /** A company the partner does not manage (x-managed-company-id answers 403). */
  otherCompanyId: 'cmp_other',
  workflows: {
    /** PDF input, EMAIL task. */
    pdfEmail: 'wf_pdf_email',
    /** PDF input, EASY_PRINT task. */
    pdfPrint: 'wf_pdf_print',
    /** PDF input, ERDS then QERDS tasks. */
    pdfRegistered: 'wf_pdf_registered',
    /** PDF input, DOCPORTAL task (Doccle): token set values read from the PDF. */
    pdfDocportal: 'wf_pdf_docportal',
    /** DATA_FILE input (CSV or XML), EMAIL task. */
    dataFile: 'wf_data_file',
    /** UBL input, PEPPOL task. */
    ubl: 'wf_ubl_peppol',
    /** PAYLOAD_PDF input, EASY_PRINT task, payment collection (hasPom). */
    payloadPdfPrint: 'wf_payload_pdf_print',
    /** PAYLOAD_WORD input, EMAIL task. */
    payloadWordEmail: 'wf_payload_word_email',
    /** PAYLOAD_WORD input, QERDS task. */
    payloadWordQerds: 'wf_payload_word_qerds',
    /** PAYLOAD_WORD input, EBOX task. */
    payloadWordEbox: 'wf_payload_word_ebox',
    /** PAYLOAD_WORD input, DOCPORTAL task, invoice tracking enabled. */
    payloadWordDocportal: 'wf_payload_word_docportal',
    /** PAYLOAD_WORD input, EASY_PRINT_FR task. */
    payloadWordPrintFr: 'wf_payload_word_print_fr',
    /** PDF input, not validated: job creation answers 400. */
    notValidated: 'wf_not_validated',
    /** PDF input, disabled: job creation answers 400. */
    disabled: 'wf_disabled',
    /** PDF input, EMAIL task, owned by the managed company. */
    managedPdfEmail: 'wf_managed_pdf_email',
    /** PDF input, EMAIL task, owned by the second managed company. */
    secondManagedPdfEmail: 'wf_managed_2_pdf_email',
  },
} as const;
