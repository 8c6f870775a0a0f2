import { PDFDocument, StandardFonts } from 'pdf-lib';

/**
 * Real PDFs for the documents a finished sending event carries (delivery proof, submission
 * report) and for the document a payload-word job generates, so the agent's proof handling is
 * tested against files pdf-lib and PDF readers can open.
 */
export interface ProofInput {
  type: 'DELIVERY_PROOF' | 'SUBMISSION_REPORT';
  sendingEventId: string;
  jobId: string;
  recipient: string;
  channels: string[];
  startedAt: string;
  endedAt: string;
  outcome: string;
}

const TITLES: Record<ProofInput['type'], string> = {
  DELIVERY_PROOF: 'Delivery proof',
  SUBMISSION_REPORT: 'Submission report',
};

// The standard Helvetica font only encodes WinAnsi; anything else becomes '?'.
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e\xa0-\xff]/g, '?');
}

async function renderLines(
  title: string,
  subject: string,
  lines: string[],
  createdAt: Date,
): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.setTitle(printable(title));
  doc.setSubject(printable(subject));
  doc.setProducer('docex sandbox');
  doc.setCreationDate(createdAt);
  doc.setModificationDate(createdAt);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  let page = doc.addPage([595, 842]);
  page.drawText(printable(title), { x: 50, y: 780, size: 20, font: bold });
  let y = 740;
  for (const line of lines) {
    if (y < 60) {
      page = doc.addPage([595, 842]);
      y = 790;
    }
    page.drawText(printable(line).slice(0, 100), { x: 50, y, size: 11, font });
    y -= 18;
  }
  return doc.save({ useObjectStreams: false });
}

export function renderProofPdf(input: ProofInput): Promise<Uint8Array> {
  const title = TITLES[input.type];
  return renderLines(
    title,
    `${title} of sending event ${input.sendingEventId}`,
    [
      `Sending event: ${input.sendingEventId}`,
      `Job: ${input.jobId}`,
      `Recipient: ${input.recipient}`,
      `Channel: ${input.channels.join(', ')}`,
      `Started: ${input.startedAt}`,
      `Ended: ${input.endedAt}`,
      `Outcome: ${input.outcome}`,
    ],
    new Date(input.endedAt),
  );
}

/** The document a PAYLOAD_WORD job produces from its template data. */
export function renderPayloadDocumentPdf(input: {
  jobName: string;
  recipient: string;
  templateData: Record<string, unknown>;
  createdAt: string;
}): Promise<Uint8Array> {
  const lines = [`Recipient: ${input.recipient}`, ''];
  for (const [key, value] of Object.entries(input.templateData)) {
    lines.push(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return renderLines(input.jobName, `Generated for ${input.recipient}`, lines, new Date(input.createdAt));
}
