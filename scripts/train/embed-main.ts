import { HEAD_TASKS, rowsPerTask } from './config.ts';
import { listTasks, loadTask } from './data.ts';
import { embedAll } from './embed.ts';

const examples = listTasks().flatMap((t) => loadTask(t, rowsPerTask(t), HEAD_TASKS));
await embedAll(examples, true, (m) => console.log(m));
