/**
 * Components report through interfaces they declare themselves (`PipelineMetrics`,
 * `LeaderReporter`, `KubeAuthReporter`, `CertificateEventPublisher`), and none imports the metrics
 * or, for TLS, the state (scripts/eslint-layers.mjs). The handles that implement them live in lower
 * layers and do not import them either: only here, where both are in reach, does anything say that
 * they fit. `npm run typecheck` (and ts-jest) compile these assignments: a member added to one side
 * and not the other fails here.
 */
import type {
  ControllerMetrics,
  CertificateEventPublisher,
  CycleOutcome,
  IntrospectionState,
  KubeAuthMetrics,
  KubeAuthOutcome,
  KubeAuthReporter,
  LeaderReporter,
  PipelineMetrics,
  ReconcileResult,
} from '../../lib';
import * as pkg from '../../lib';

/** Compile-time: what `createControllerMetrics` makes is what the pipeline and the work queue report to. */
export const pipelineMetrics = (metrics: ControllerMetrics): PipelineMetrics => metrics;
/** Compile-time: the same handle is what the Lease elector reports leadership to. */
export const leaderReporter = (metrics: ControllerMetrics): LeaderReporter => metrics;
/** Compile-time: `createKubeAuthMetrics` makes what `createKubeAuth` reports to. */
export const kubeAuthReporter = (metrics: KubeAuthMetrics): KubeAuthReporter => metrics;
/** Compile-time: the state is where `watchServingCertificate` publishes. */
export const certificateEvents = (state: IntrospectionState): CertificateEventPublisher => state;

/** `true` when `A` and `B` are the same type, else `false`. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/**
 * Compile-time, where the assignments above cannot see: a method's parameters are compared both
 * ways, so a value the component passes and the adapter does not know would slip through them.
 * The counter knows every outcome the guard reports (and no other), and controller-runtime's
 * results include every way a cycle ends.
 */
export const outcomesMatch: Same<Parameters<KubeAuthMetrics['reviewed']>[0], KubeAuthOutcome> = true;
export const cycleOutcomesKnown: Same<Exclude<CycleOutcome, ReconcileResult>, never> = true;

test('the adapters are exported beside the components they report for', () => {
  expect(typeof pkg.createKubeAuthMetrics).toBe('function');
  expect(typeof pkg.createControllerMetrics).toBe('function');
  expect(typeof pkg.createIntrospectionState).toBe('function');
});
