/**
 * The expansion limits of the parsers (inspection.limits): set once in each inspector worker from
 * the configuration (workerData), the schema's defaults elsewhere. Parsers read them here rather
 * than through every call, as they run nowhere but in those workers.
 */
import { type InspectionConfig, inspectionSchema } from '../../config/inspection-schema.js';
import { mib, quoteName, reject } from './codes.js';

export type ParseLimits = InspectionConfig['limits'];

let current: ParseLimits = inspectionSchema.parse({}).limits;

export const parseLimits = (): ParseLimits => current;

export function setParseLimits(limits: Partial<ParseLimits>): void {
  current = { ...current, ...limits };
}

/** A file over one of the limits: the reason names the limit and its configuration key. */
export function overLimit(fileName: string, what: string, key: keyof ParseLimits) {
  const value = current[key];
  const shown =
    key === 'pdfInflate' || key === 'csvLineBytes' || key === 'sidecarBytes'
      ? mib(value)
      : value.toLocaleString('en');
  return reject(
    'DOCEX_INPUT_TOO_COMPLEX',
    `${quoteName(fileName)} ${what} over the limit of ${shown} (inspection.limits.${key}).`,
    { limit: key, [key]: value },
  );
}
