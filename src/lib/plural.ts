/** `n` and the word in its number, for messages: `counted(1, 'template')` is "1 template", `counted(2, 'template')` "2 templates". */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
