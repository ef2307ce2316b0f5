import { HEAD_TASKS, ROWS_PER_TASK } from './config.ts';
import { listTasks, loadTask } from './data.ts';
import { embedAll } from './embed.ts';

const examples = listTasks().flatMap((t) => loadTask(t, ROWS_PER_TASK, HEAD_TASKS));
await embedAll(examples, true, (m) => console.log(m));
