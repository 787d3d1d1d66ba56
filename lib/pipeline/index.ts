export {
  createPipeline,
  type CycleSpec,
  type CycleResult,
  type PhaseStatus,
  type PipelineOptions,
  type ReconciliationPipeline,
} from './pipeline';
export { createWorkQueue, WORK_QUEUE_DEFAULTS, type WorkQueue, type WorkQueueOptions } from './work-queue';
export { QUEUE_PROCESSING_DEFAULTS, type QueueProcessing, type QueueProcessingOptions } from './queue-processing';
export type {
  ControllerRuntimeReporter,
  CycleOutcome,
  PipelineDriver,
  PipelineMetrics,
  QueueReporter,
  WorkQueueReading,
} from './reporting';
