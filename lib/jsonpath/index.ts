/**
 * A kubectl-style JSONPath engine (the template language of `kubectl -o jsonpath=…`), written to
 * behave like k8s.io/client-go/util/jsonpath, for selecting parts of debug variables.
 */
export { DEFAULT_JSONPATH_LIMITS, type JsonPathLimits } from './limits';
export { JsonPathError, type JsonPathErrorKind } from './errors';
export { compileTemplate, templateShape, type CompiledTemplate, type TemplateShape } from './template';
export { execute, selectJsonSliced, selectTextSliced, type ExecuteOptions, type ExecuteResult, type FieldSelection } from './select';
