// A run of some groups only (BENCH_STORE_GROUPS) keeps the other groups' runs from the last store-runs.json, so
// store.md and the README still show every group, each said to be from the run it came from. A goal compares
// cases of one group only, so no ratio is ever taken between runs of different times.
import { existsSync, readFileSync } from 'node:fs';
import { RESULTS_DIR } from '../support/environment.mjs';

const RUNS_FILE = new URL('store-runs.json', RESULTS_DIR);

/**
 * The cases and runs of the groups not in `groupsRun`, from the last store-runs.json, and where each group came
 * from: { cases, runs, origins: { [group]: { commit, date, rounds, measureS } } }. Empty when there is no file, or it is
 * unreadable (said on stderr).
 */
export function carriedOver(groupsRun) {
  const none = { cases: [], runs: [], origins: {} };
  if (!existsSync(RUNS_FILE)) return none;
  let saved;
  try {
    saved = JSON.parse(readFileSync(RUNS_FILE, 'utf8'));
  } catch (error) {
    process.stderr.write(`store-runs.json unreadable, no earlier runs carried over: ${error.message}\n`);
    return none;
  }
  const cases = saved.cases.filter((c) => !groupsRun.includes(c.group));
  const ids = new Set(cases.map((c) => c.id));
  const origins = {};
  for (const group of new Set(cases.map((c) => c.group))) {
    // A file written before origins were kept: its top-level commit and rounds are every group's.
    origins[group] = saved.origins?.[group] ?? { commit: saved.commit, date: undefined, rounds: saved.rounds, measureS: undefined };
  }
  return { cases, runs: saved.runs.filter((r) => ids.has(r.id)), origins };
}

/** "commit abc1234, 5 rounds of 2 s, 2026-11-24" for a group's origin. */
export function describeOrigin({ commit, date, rounds, measureS }) {
  return `commit ${commit}, ${rounds} round${rounds === 1 ? '' : 's'}${measureS ? ` of ${measureS} s` : ''}${date ? `, ${date.slice(0, 10)}` : ''}`;
}
