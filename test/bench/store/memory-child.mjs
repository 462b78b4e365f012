// Runs one memory case of the store bench in a child process that exits after it, so that nothing the case leaves
// behind (RateLimiterMemory's timer per key, a heap of a million keys) runs into the cases after it.
//   parent: runMemoryCaseInChild(id, { inFlight, warmupMs, measureMs, onMeasureStart(pid), onMeasureEnd() })
//           resolves to the closed loop's result; the child lives until onMeasureEnd has run (it reads /proc of it);
//   child:  node --expose-gc memory-child.mjs <case id> <inFlight> <warmupMs> <measureMs>
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { keySequence, runClosedLoop } from '../support/load.mjs';
import { memoryCases } from './memory-cases.mjs';

const HERE = fileURLToPath(import.meta.url);

export function runMemoryCaseInChild(id, { inFlight, warmupMs, measureMs, onMeasureStart, onMeasureEnd }) {
  return new Promise((resolve, reject) => {
    const child = fork(HERE, [id, String(inFlight), String(warmupMs), String(measureMs)], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result;
    child.on('message', (message) => {
      if (message.type === 'measure-start') onMeasureStart(child.pid);
      else if (message.type === 'result') {
        result = message.result;
        onMeasureEnd();
        child.send({ type: 'exit' });
      }
      else if (message.type === 'error') reject(new Error(`memory case ${id}: ${message.message}`));
    });
    child.once('error', reject);
    child.once('exit', (code) => (result ? resolve(result) : reject(new Error(`memory case ${id}: child exited with code ${code} and no result`))));
  });
}

/** Takes every key once (limit 1: each key is then exhausted), so the measured calls are refusals. */
async function exhaustEveryKey(call, keyCount) {
  for (let i = 0; i < keyCount; i++) await call(`k${i}`);
}

async function child([id, inFlight, warmupMs, measureMs]) {
  const benchCase = memoryCases().find((c) => c.id === id);
  if (!benchCase) throw new Error(`no memory case ${id}`);
  const subject = await benchCase.make({});
  try {
    if (benchCase.refuse) await exhaustEveryKey(subject.call, benchCase.keyCount);
    const result = await runClosedLoop({
      call: subject.call,
      keys: keySequence({ keyCount: benchCase.keyCount }),
      concurrency: Number(inFlight),
      warmupMs: Number(warmupMs),
      measureMs: Number(measureMs),
      countErrors: true,
      onMeasureStart: async () => {
        process.send({ type: 'measure-start' });
      },
    });
    return result;
  } finally {
    await subject.close();
  }
}

if (process.argv[1] === HERE && process.send) {
  // Exits once the parent has the answer: the timers RateLimiterMemory left (unref'd) go with the process.
  process.on('message', (message) => {
    if (message.type === 'exit') process.exit(0);
  });
  child(process.argv.slice(2)).then(
    (result) => process.send({ type: 'result', result }),
    (error) => process.send({ type: 'error', message: error.stack ?? String(error) }, () => process.exit(1)),
  );
}
