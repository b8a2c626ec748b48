// node --import tsx scripts/bench/profile-summary.ts <file.cpuprofile> [--top 25]
// A .cpuprofile (npm run bench:import -- --cpu-prof dir) read as npm run bench:profile reads its own:
// self time by place (package, Node module, src/ file), then by function, in percent of busy time.
// Used to find where the import worker's time goes (BENCHMARKS.md, "Imports").
import { readFileSync } from 'node:fs';
import { intFlag, parseFlags } from './common.js';
import { placeOf, summarise } from './profile.js';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; startTime: number; samples: number[]; timeDeltas: number[] };

/** Self time per function (`name place:line`), in percent of the time not idle. */
function byFunction(profile: Profile): { name: string; percent: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = profile.timeDeltas[i] ?? 0;
    if (!node || node.callFrame.functionName === '(idle)') return;
    const name = `${node.callFrame.functionName || '(anonymous)'} ${placeOf(node.callFrame)}:${node.callFrame.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + dt);
    busy += dt;
  });
  return [...self.entries()].map(([name, t]) => ({ name, percent: (100 * t) / busy })).sort((a, b) => b.percent - a.percent);
}

function main() {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [--top N]');
  const top = intFlag(parseFlags(rest, ['top']), 'top', 25, 1, 500);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const total = profile.timeDeltas.reduce((a, b) => a + b, 0);
  const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  const idle = profile.samples.reduce((sum, id, i) => sum + (idleIds.has(id) ? profile.timeDeltas[i]! : 0), 0);
  process.stdout.write(`${(total / 1e6).toFixed(1)} s profiled, ${((100 * (total - idle)) / total).toFixed(0)}% busy\n\n| place | % |\n|---|---:|\n`);
  for (const { place, percent } of summarise(profile as never).slice(0, top)) process.stdout.write(`| ${place} | ${percent.toFixed(1)} |\n`);
  process.stdout.write('\n| function | % |\n|---|---:|\n');
  for (const { name, percent } of byFunction(profile).slice(0, top)) process.stdout.write(`| ${name} | ${percent.toFixed(1)} |\n`);
}

main();
