import { describe, expect, it } from 'vitest';
import { modeForInputSource, resolveFolderMode } from '../../src/config/folder-mode.js';
import { DocexError } from '../../src/core/errors.js';
import { INPUT_SOURCE_TYPES } from '../../src/domain/wire.js';

const folder = { name: 'letters', workflowId: 'wf_x' };

describe('folder mode', () => {
  it('follows the workflow input source when the folder names no mode', () => {
    expect(INPUT_SOURCE_TYPES.map((type) => [type, modeForInputSource(type)])).toEqual([
      ['PDF', 'single-file'],
      ['PAYLOAD_PDF', 'payload-pdf'],
      ['PAYLOAD_WORD', 'payload-word'],
      ['DATA_FILE', 'single-file'],
      ['UBL', 'single-file'],
    ]);
    expect(resolveFolderMode(folder, 'PAYLOAD_WORD')).toBe('payload-word');
  });

  it('keeps a configured mode that fits the workflow', () => {
    expect(resolveFolderMode({ ...folder, mode: 'payload-pdf' }, 'PAYLOAD_PDF')).toBe('payload-pdf');
  });

  it('refuses a configured mode that contradicts the workflow', () => {
    const run = () => resolveFolderMode({ ...folder, mode: 'single-file' }, 'PAYLOAD_PDF');
    expect(run).toThrow(DocexError);
    expect(run).toThrow(
      /mode single-file does not fit workflow wf_x \(input source PAYLOAD_PDF needs payload-pdf\)/,
    );
  });

  it('needs an explicit mode for an input source it does not know, and trusts one that is given', () => {
    expect(() => resolveFolderMode(folder, 'SPREADSHEET')).toThrow(
      expect.objectContaining({ code: 'DOCEX_CONFIG_MODE' }),
    );
    expect(resolveFolderMode({ ...folder, mode: 'single-file' }, 'SPREADSHEET')).toBe('single-file');
  });
});
