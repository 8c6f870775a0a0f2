/**
 * A folder's mode when the YAML leaves it out: it follows the workflow's input source. Pure: the
 * caller fetches the workflow and passes its inputSource.type.
 */
import { DocexError } from '../core/errors.js';
import type { FolderConfig, FolderMode } from './schema.js';

const MODE_BY_INPUT_SOURCE: Readonly<Record<string, FolderMode>> = {
  PDF: 'single-file',
  DATA_FILE: 'single-file',
  UBL: 'single-file',
  PAYLOAD_PDF: 'payload-pdf',
  PAYLOAD_WORD: 'payload-word',
};

/** The mode a workflow's input source calls for; undefined for a type this agent does not know. */
export function modeForInputSource(inputSourceType: string): FolderMode | undefined {
  return MODE_BY_INPUT_SOURCE[inputSourceType];
}

/**
 * The folder's effective mode. A configured mode must agree with the workflow (the service would
 * answer 400 to every file otherwise); an unknown input source needs an explicit mode.
 * Throws DocexError DOCEX_CONFIG_MODE.
 */
export function resolveFolderMode(
  folder: Pick<FolderConfig, 'name' | 'workflowId' | 'mode'>,
  inputSourceType: string,
): FolderMode {
  const expected = modeForInputSource(inputSourceType);
  const details = { folder: folder.name, workflowId: folder.workflowId, inputSourceType };
  if (folder.mode === undefined) {
    if (expected) return expected;
    throw new DocexError(
      'DOCEX_CONFIG_MODE',
      `folder ${folder.name}: workflow ${folder.workflowId} has input source ${inputSourceType}, which the agent does not know; set mode`,
      { details },
    );
  }
  if (expected && expected !== folder.mode) {
    throw new DocexError(
      'DOCEX_CONFIG_MODE',
      `folder ${folder.name}: mode ${folder.mode} does not fit workflow ${folder.workflowId} (input source ${inputSourceType} needs ${expected})`,
      { details: { ...details, mode: folder.mode, expected } },
    );
  }
  return folder.mode;
}
