import type { PayloadJobRequest } from '../../domain/wire.js';
import type { ContentItem } from './types.js';

/** The single sending event of a payload job. */
export function payloadItem(payload: PayloadJobRequest['payload'], filename: string): ContentItem {
  const ids = payload.channelIdentifiers;
  const recipient =
    ids.find((c) => c.kind === 'EMAIL_ADDRESS')?.value ??
    ids.find((c) => c.kind === 'ADDRESS_COMPANY_NAME')?.value ??
    ids.find((c) => c.kind === 'NATIONAL_REGISTER_NUMBER' || c.kind === 'COMPANY_IDENTIFICATION_NUMBER')
      ?.value ??
    ids[0]?.value ??
    filename;
  const hint = [
    filename,
    ...ids.map((c) => c.value),
    ...payload.extraInfoIdentifiers.map((e) => e.value),
  ].join(' ');
  return { sourceRef: filename, recipient, outcomeHint: hint };
}
