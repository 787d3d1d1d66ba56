/** What a host says about one reconciliation cycle, and what it gets back: the pipeline's data, no behaviour. */

/** One reconciliation cycle, described once: what triggered it and how each phase runs. */
export interface CycleSpec {
  /** What started the cycle, for example `resource-change`, `config-change`, `resync`. */
  trigger: string;
  /** Why, in a sentence (`ingress default/web updated`). Defaults to the trigger. */
  reason?: string;
  /** Renders the load-balancer configuration. */
  render: () => string | Promise<string>;
  /** Validates it: a throw (or `false`) fails validation and skips deployment. */
  validate?: (config: string) => unknown;
  /** The load-balancer endpoints to deploy to (pods, instances). */
  endpoints?: readonly string[];
  /** Deploys to one endpoint; a throw fails that endpoint (the others are still tried). */
  deploy?: (endpoint: string, config: string) => unknown;
}

/** What `ReconciliationPipeline.run` answers for a cycle that succeeded. */
export interface CycleResult {
  /** The cycle's correlation id (every event of the cycle carries it). */
  readonly correlationId: string;
  /** The rendered configuration. */
  readonly config: string;
  /** Endpoints deployed to. */
  readonly endpointsSucceeded: number;
}
