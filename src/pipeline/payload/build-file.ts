/**
 * A payload-word file read and cut into job requests by its extension: CSV with the folder's
 * column mapping, JSON as is, XML through the folder's record mapping. Reads the file itself, so
 * it runs where the parse runs (the isolated inspector), not on the agent's event loop.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { quoteName, reject } from '../inspect/codes.js';
import type { ColumnMapping } from './columns.js';
import { payloadRequestsFromCsv } from './csv-requests.js';
import { payloadRequestsFromJson } from './json-requests.js';
import type { BuildResult } from './types.js';
import { payloadRequestsFromXml, type XmlPayloadMapping } from './xml-requests.js';

export interface PayloadFileInput {
  filePath: string;
  fileName: string;
  workflowId: string;
  /** The folder's name, for the reason when an XML file has no mapping. */
  folder: string;
  csvColumns?: ColumnMapping | undefined;
  xml?: XmlPayloadMapping | undefined;
}

export async function buildPayloadFile(input: PayloadFileInput): Promise<BuildResult> {
  const { workflowId, fileName, csvColumns, xml } = input;
  const ext = path.extname(fileName).toLowerCase();
  if (ext !== '.csv' && ext !== '.json' && !(ext === '.xml' && xml)) {
    return reject(
      'DOCEX_INPUT_PAYLOAD_MAPPING',
      `${quoteName(fileName)}: an XML payload file needs mapping.xml (recordPath, fields) on folder ${input.folder}.`,
    );
  }
  const bytes = await readFile(input.filePath);
  if (ext === '.csv') {
    return payloadRequestsFromCsv(bytes, {
      workflowId,
      fileName,
      ...(csvColumns && Object.keys(csvColumns).length > 0 ? { mapping: csvColumns } : {}),
    });
  }
  if (ext === '.json') return payloadRequestsFromJson(bytes, { workflowId, fileName });
  return payloadRequestsFromXml(bytes, xml as XmlPayloadMapping, { workflowId, fileName });
}
