/**
 * The next time a node-cron expression fires after a given instant, computed from the injected
 * clock's time (node-cron's own scheduler reads the wall clock, which tests cannot move). Fields
 * come from node-cron's parser, so both agree on what an expression means. Local time, as node-cron.
 */
import cron from 'node-cron';

export interface CronPlan {
  readonly expression: string;
  /** The first firing strictly after `afterMs`, in epoch ms (undefined: none within 5 years). */
  next(afterMs: number): number | undefined;
}

const FULL_DOM = 31;
const FULL_DOW = 7;

export function cronPlan(expression: string): CronPlan {
  const fields = cron.parse(expression);
  const seconds = new Set(fields.second);
  const minutes = new Set(fields.minute);
  const hours = new Set(fields.hour);
  const months = new Set(fields.month);
  const lastDay = fields.dayOfMonth.includes('L');
  const dom = new Set(fields.dayOfMonth.filter((d): d is number => typeof d === 'number'));
  // node-cron also reads 7 as Sunday.
  const dow = new Set(fields.dayOfWeek.filter((d): d is number => typeof d === 'number').map((d) => d % 7));
  const domAll = dom.size >= FULL_DOM && !lastDay;
  const dowAll = dow.size >= FULL_DOW;

  const dayMatches = (d: Date): boolean => {
    const last = new Date(d.getFullYear(), d.getMonth() + 1, 0).getDate();
    const byDom = dom.has(d.getDate()) || (lastDay && d.getDate() === last);
    const byDow = dow.has(d.getDay());
    // Classic cron: when both day fields are restricted, either one matching is enough.
    if (!domAll && !dowAll) return byDom || byDow;
    return byDom && byDow;
  };

  return {
    expression,
    next(afterMs: number): number | undefined {
      const d = new Date(Math.floor(afterMs / 1000) * 1000 + 1000);
      const limit = afterMs + 5 * 366 * 86_400_000;
      while (d.getTime() <= limit) {
        if (!months.has(d.getMonth() + 1)) {
          d.setMonth(d.getMonth() + 1, 1);
          d.setHours(0, 0, 0, 0);
        } else if (!dayMatches(d)) {
          d.setDate(d.getDate() + 1);
          d.setHours(0, 0, 0, 0);
        } else if (!hours.has(d.getHours())) {
          d.setHours(d.getHours() + 1, 0, 0, 0);
        } else if (!minutes.has(d.getMinutes())) {
          d.setMinutes(d.getMinutes() + 1, 0, 0);
        } else if (!seconds.has(d.getSeconds())) {
          d.setSeconds(d.getSeconds() + 1, 0);
        } else return d.getTime();
      }
      return undefined;
    },
  };
}
