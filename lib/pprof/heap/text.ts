import { getHeapStatistics } from 'node:v8';
import type { HeapSamples } from './sampler';
import { describeFrame, type HeapStack } from './to-pprof';

/**
 * The `debug=1` text form of the heap profile, like Go's: the stacks holding the most live bytes
 * first, then the engine's own heap statistics (Go prints runtime.MemStats there).
 */
export function heapText(
  stacks: HeapStack[],
  intervalBytes: number,
  gcRan: boolean,
  deltaSeconds?: number,
  samples: HeapSamples = 'live',
): string {
  // Largest change first: for a delta, growth and release both matter.
  const sorted = [...stacks].sort((a, b) => Math.abs(b.bytes) - Math.abs(a.bytes));
  const total = sorted.reduce((sum, s) => sum + s.bytes, 0);
  const lines =
    samples === 'allocations'
      ? [
          `allocs profile: ${total} bytes allocated (estimated) ${deltaSeconds === undefined ? 'since sampling started' : `over ${deltaSeconds} s`} in ${sorted.length} stacks @ sampling interval ${intervalBytes} bytes`,
          '# V8 sampling heap profiler keeping the samples of freed objects: every sampled allocation, live or not',
        ]
      : deltaSeconds === undefined
        ? [
            `heap profile: ${total} bytes in use (estimated) in ${sorted.length} stacks @ sampling interval ${intervalBytes} bytes`,
            `# V8 sampling heap profiler: live objects sampled since the router started${gcRan ? ', after a full GC' : '; add gc=1 to collect garbage first'}`,
          ]
        : [
            `heap profile: ${total >= 0 ? '+' : ''}${total} bytes in use over ${deltaSeconds} s (estimated) in ${sorted.length} stacks @ sampling interval ${intervalBytes} bytes`,
            `# delta: live bytes at the end minus at the start, per allocating stack (negative: released)${gcRan ? '; a full GC ran before each snapshot' : ''}`,
          ];
  for (const stack of sorted) {
    lines.push('', `${stack.bytes} bytes @ ${describeFrame(stack.frames[0])}`);
    for (const frame of stack.frames.slice(1)) lines.push(`#\t${describeFrame(frame)}`);
  }
  lines.push('', '# v8.getHeapStatistics()');
  for (const [key, value] of Object.entries(getHeapStatistics())) lines.push(`# ${key} = ${value}`);
  const memory = process.memoryUsage();
  lines.push('', '# process.memoryUsage()');
  for (const [key, value] of Object.entries(memory)) lines.push(`# ${key} = ${value}`);
  return `${lines.join('\n')}\n`;
}
