export {
  createPipeline,
  type CycleSpec,
  type CycleResult,
  type PhaseStatus,
  type PipelineOptions,
  type ReconciliationPipeline,
} from './pipeline';
