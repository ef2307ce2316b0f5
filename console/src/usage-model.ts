import type { UsageDay } from './api.ts';

/** The days of a usage window that had any traffic (a request, an error or a teacher call), newest first. */
export function daysWithTraffic(daily: readonly UsageDay[]): UsageDay[] {
  return daily.filter((d) => d.requests > 0 || d.errors > 0 || d.teacher_calls > 0).reverse();
}

/**
 * The y axis of a count chart: whole, evenly spaced ticks from 0 (steps of 1, 2 or 5 times a power of
 * ten, at most about five of them) and the top the bars are scaled to (the last tick, at least `max`).
 * 3 requests: 0, 1, 2, 3; 7: 0, 2, 4, 6, 8.
 */
export function axisTicks(max: number): { top: number; ticks: number[] } {
  const raw = Math.max(1, max) / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power);
  const top = step * Math.max(1, Math.ceil(max / step));
  const ticks: number[] = [];
  for (let t = 0; t <= top; t += step) ticks.push(t);
  return { top, ticks };
}
