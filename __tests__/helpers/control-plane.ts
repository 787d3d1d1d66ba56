/**
 * A real Kubernetes control plane for the tests: etcd and kube-apiserver, built from their Go
 * modules by `scripts/build-peers.sh` into the peers cache, started on loopback with RBAC on and
 * stopped by PID (scripts/control-plane.js, plain CommonJS shared with the benchmarks; this file
 * adds what is Jest's). Each test file that needs one starts its own (about 5 s) and stops it in
 * `afterAll`. On a machine without the binaries the tests skip with a message saying how to build
 * them; in CI a missing control plane fails.
 */

import { controlPlaneMissing } from '../../scripts/control-plane';
import { describeWithPeer } from './peers';

export { controlPlaneMissing, peerBinary, resourcePathOf, startControlPlane } from '../../scripts/control-plane';
export type { ApiAnswer, ControlPlane, KubeObject } from '../../scripts/control-plane';

/**
 * `describe` for tests that need the control plane (and whatever else `missing` names), else a
 * skip with the reason (a failure in CI). A CI line that leaves the Kubernetes tests to the lines
 * that built the control plane sets `CI_CONTROL_PLANE=elsewhere`, and skips them with that said.
 */
export function describeNeedingControlPlane(missing: string | undefined): jest.Describe {
  if (process.env.CI_CONTROL_PLANE === 'elsewhere') {
    console.warn('skipping: this CI line leaves the Kubernetes tests to the lines that run them (CI_CONTROL_PLANE=elsewhere)');
    return describe.skip;
  }
  return describeWithPeer(missing);
}

/** `describe` with a real control plane, else a skip with the reason (a failure in CI). */
export const describeWithControlPlane: jest.Describe = describeNeedingControlPlane(controlPlaneMissing());
