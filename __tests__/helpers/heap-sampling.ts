import { Session } from 'node:inspector';

/**
 * Whether V8's sampling heap profiler is running in this process, asked of V8 itself through a
 * fresh inspector session, whoever started it (the inspector or @datadog/pprof's native module):
 * V8 refuses `getSamplingProfile` when it is not sampling.
 */
export function v8HeapSampling(): Promise<boolean> {
  const session = new Session();
  session.connect();
  return new Promise((resolve) => {
    session.post('HeapProfiler.getSamplingProfile', (err) => {
      session.disconnect();
      resolve(err === null);
    });
  });
}
