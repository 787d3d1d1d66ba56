import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full garbage collection on demand, without starting jest with --expose-gc: memory tests read
 * what is still reachable, not how much garbage the collector happened to leave behind.
 */
export function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}
