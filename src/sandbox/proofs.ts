/**
 * Real PDFs for the documents a finished sending event carries (delivery proof, submission
 * report) and for the document a payload-word job generates, so the agent's proof handling is
 * tested against files pdf-lib and PDF readers can open.
 *
 * Written directly (Helvetica, a standard font every reader has, on as many pages as the lines
 * need; the objects and the cross-reference table counted here) rather than built with pdf-lib,
 * which embeds the fonts and saves a whole document each time: a night of tens of thousands of
 * sending events needs twice as many proofs, and the same input always gives the same bytes, so
 * a proof is rendered at each download instead of kept as a file (blobs.ts).
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

// The standard Helvetica font is written in WinAnsi here; anything else becomes '?'.
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e\xa0-\xff]/g, '?');
}

/** A PDF literal string of `text` (latin1, printable only). */
function literal(text: string): string {
  return `(${printable(text).replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/** A PDF date: D:YYYYMMDDHHmmSSZ (UTC). */
function pdfDate(at: Date): string {
  const t = Number.isNaN(at.getTime()) ? new Date(0) : at;
  return `D:${t.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

const PAGE = '[0 0 595 842]';
const FIRST_PAGE_TOP = 740;
const NEXT_PAGE_TOP = 790;
const BOTTOM = 60;
const LINE_GAP = 18;

/** Text operators per page: the title on the first, then the lines, 18 points apart. */
function pageContents(title: string, lines: readonly string[]): string[] {
  const pages: string[][] = [[`BT /F2 20 Tf 50 780 Td ${literal(title)} Tj ET`]];
  let y = FIRST_PAGE_TOP;
  for (const line of lines) {
    if (y < BOTTOM) {
      pages.push([]);
      y = NEXT_PAGE_TOP;
    }
    (pages.at(-1) as string[]).push(
      `BT /F1 11 Tf 50 ${y} Td ${literal(printable(line).slice(0, 100))} Tj ET`,
    );
    y -= LINE_GAP;
  }
  return pages.map((ops) => ops.join('\n'));
}

function renderLines(title: string, subject: string, lines: string[], createdAt: Date): Uint8Array {
  const contents = pageContents(title, lines);
  const date = pdfDate(createdAt);
  // 1 catalog, 2 page tree, 3 and 4 fonts, 5 info, then a page and its content per page.
  const pageIds = contents.map((_, i) => 6 + 2 * i);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${contents.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>',
    `<< /Title ${literal(title)} /Subject ${literal(subject)} /Producer (docex sandbox) /CreationDate (${date}) /ModDate (${date}) >>`,
  ];
  for (const [i, content] of contents.entries()) {
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox ${PAGE} /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents ${pageIds[i]! + 1} 0 R >>`,
      `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    );
  }
  // Every character is one latin1 byte: lengths and offsets are string lengths.
  let body = '%PDF-1.7\n%\xe2\xe3\xcf\xd3\n';
  const offsets: number[] = [];
  for (const [i, object] of objects.entries()) {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  }
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 5 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

export function renderProofPdf(input: ProofInput): Uint8Array {
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
}): Uint8Array {
  const lines = [`Recipient: ${input.recipient}`, ''];
  for (const [key, value] of Object.entries(input.templateData)) {
    lines.push(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return renderLines(input.jobName, `Generated for ${input.recipient}`, lines, new Date(input.createdAt));
}
