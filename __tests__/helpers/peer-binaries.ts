/**
 * Where `scripts/build-peers.sh` puts the servers it builds from their Go modules (etcd,
 * kube-apiserver with leader-election, Prometheus 3 with promtool): a folder per peer and pinned
 * version under `PEERS_DIR` (default `~/.cache/controller-introspection/peers`). Kept apart from
 * control-plane.ts, which decides on import whether the control plane's tests run (and says so),
 * so that the Prometheus harness finds Prometheus 3 without that side effect.
 */
import fs from 'node:fs';
import { peerBinary } from '../../scripts/control-plane';
import { describeWithPeer } from './peers';

/** Where `scripts/build-peers.sh` puts each binary (scripts/control-plane.js, shared with the benchmarks). */
export { peerBinary };

/**
 * `describe` for tests of a binary `scripts/build-peers.sh` builds: skipped with the reason when
 * it is missing on a contributor machine (a failure in CI), and skipped with that said on the CI
 * lines that leave those tests to the lines that build the peers (`CI_CONTROL_PLANE=elsewhere`).
 */
export function describeWithBuiltPeer(peer: Parameters<typeof peerBinary>[0]): jest.Describe {
  if (process.env.CI_CONTROL_PLANE === 'elsewhere') {
    console.warn(`skipping: this CI line leaves the tests of ${peer} to the lines that build it (CI_CONTROL_PLANE=elsewhere)`);
    return describe.skip;
  }
  const binary = peerBinary(peer);
  return describeWithPeer(fs.existsSync(binary) ? undefined : `${binary} is not built (bash scripts/build-peers.sh)`);
}
