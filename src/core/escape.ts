/**
 * How a character that must not be shown as it is (a control, an invisible format character, a
 * bidi override) is written in a reason or a report: `\u202e`, or `\u{1f600}` past the BMP, so
 * what an operator reads is what the text holds.
 */
export function escapeCodePoint(c: string): string {
  const cp = c.codePointAt(0) as number;
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
}
