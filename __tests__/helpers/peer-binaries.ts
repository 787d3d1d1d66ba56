/**
 * Where `scripts/build-peers.sh` puts the servers it builds from their Go modules (etcd,
 * kube-apiserver with leader-election, Prometheus 3 with promtool): a folder per peer and pinned
 * version under `PEERS_DIR` (default `~/.cache/controller-introspection/peers`). Kept apart from
 * control-plane.ts, which decides on import whether the control plane's tests run (and says so),
 * so that the Prometheus harness finds Prometheus 3 without that side effect.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeWithPeer } from './peers';

const REPO = path.resolve(__dirname, '..', '..');
const PEERS_DIR = process.env.PEERS_DIR || path.join(os.homedir(), '.cache', 'controller-introspection', 'peers');

/** The version a peer's module pins in `scripts/peers/<peer>/go.mod`. */
function pinned(peer: string, module: string): string {
  const gomod = fs.readFileSync(path.join(REPO, 'scripts', 'peers', peer, 'go.mod'), 'utf8');
  const match = new RegExp(`^\\s*(?:require\\s+)?${module.replace(/[.]/g, '\\.')}\\s+(v\\S+)`, 'm').exec(gomod);
  if (!match) throw new Error(`scripts/peers/${peer}/go.mod pins no ${module}`);
  return match[1];
}

/** Where `scripts/build-peers.sh` puts each binary. */
export function peerBinary(peer: 'kube-apiserver' | 'etcd' | 'prometheus' | 'promtool' | 'leader-election' | 'native-reference'): string {
  const [dir, module] = {
    'kube-apiserver': ['kube-apiserver', 'k8s.io/kubernetes'],
    'leader-election': ['kube-apiserver', 'k8s.io/kubernetes'],
    etcd: ['etcd', 'go.etcd.io/etcd/server/v3'],
    prometheus: ['prometheus', 'github.com/prometheus/prometheus'],
    promtool: ['prometheus', 'github.com/prometheus/prometheus'],
    // client_golang's native histograms and prometheus/common's decoder, built with Prometheus 3.
    'native-reference': ['prometheus', 'github.com/prometheus/prometheus'],
  }[peer];
  return path.join(PEERS_DIR, `${dir}-${pinned(dir, module)}`, peer);
}

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
