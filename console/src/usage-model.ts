import type { UsageDay } from './api.ts';

/** The days of a usage window that had any traffic (a request or an error), newest first. */
export function daysWithTraffic(daily: readonly UsageDay[]): UsageDay[] {
  return daily.filter((d) => d.requests > 0 || d.errors > 0).reverse();
}
