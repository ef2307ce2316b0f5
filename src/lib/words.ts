/** "1 template", "2 templates": a count with its noun in the right number (`many`: an irregular plural). */
export function counted(n: number, noun: string, many = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : many}`;
}
