// The controller's replicas as the pods of its Deployment, listed by label selector through
// client-node's CoreV1Api (typed structurally), each pod's fields checked before they are used.

import { isIP } from 'node:net';
import { apiErrorReason } from './api-error';
import { quoteText } from '../util/cut-text';
import { withTimeout } from '../util/with-timeout';

/**
 * A Pod as the fleet view reads it: client-node's `V1Pod` fits. Only these fields are read,
 * and each is checked first: a list answered by a peer API is untrusted.
 */
export interface PodLike {
  /** Its name, uid and lifetime. */
  metadata?: {
    /** The pod's name. */
    name?: string;
    /** The pod's uid: a new pod under an old name is another replica. */
    uid?: string;
    /** When the pod was created (client-node 1.x hands a `Date`; raw JSON a string). */
    creationTimestamp?: Date | string;
    /** Set once the pod is being deleted. */
    deletionTimestamp?: Date | string;
  };
  /** The ServiceAccount it runs as: the fleet view sends its token only to pods that run as its own. */
  spec?: {
    /** The pod's ServiceAccount; `default` when absent, as the API server admits it. */
    serviceAccountName?: string;
  };
  /** Its phase, address and conditions. */
  status?: {
    /** `Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`. */
    phase?: string;
    /** The pod's address, where its introspection server is read. */
    podIP?: string;
    /** Its conditions; `Ready` is read. */
    conditions?: Array<{
      /** The condition's type (`Ready`). */
      type?: string;
      /** `True`, `False` or `Unknown`. */
      status?: string;
    }>;
  };
}

/** A page of pods as `listNamespacedPod` answers it: client-node's `V1PodList` fits. */
export interface PodListLike {
  /** The pods. */
  items?: PodLike[];
  /** The token of the next page (client-node names it `_continue`; raw JSON `continue`). */
  metadata?: {
    /** client-node's spelling of `continue`. */
    _continue?: string;
    /** The raw API's spelling. */
    continue?: string;
  };
}

/**
 * The one call of client-node's `CoreV1Api` (1.x and 2.x: object parameters) the fleet view makes,
 * written structurally so that this package does not depend on client-node:
 * `kc.makeApiClient(k8s.CoreV1Api)` fits. The controller's ServiceAccount needs a Role that may
 * `list` `pods` in its namespace. A failed call rejects with an error carrying the HTTP status as
 * a numeric `code` (client-node's `ApiException`).
 */
export interface PodsApi {
  /** GET `/api/v1/namespaces/{namespace}/pods?labelSelector=…&limit=…`. */
  listNamespacedPod(param: { namespace: string; labelSelector?: string; limit?: number; _continue?: string }): Promise<PodListLike>;
}

/** One replica as the pod list tells of it, each field checked. */
export interface ReplicaPod {
  /** The pod's name; `(pod N)` when the list's N-th entry had none that could be read. */
  readonly name: string;
  /** The pod's uid, or null. */
  readonly uid: string | null;
  /** The pod's IP address (v4 or v6), or null while it has none. */
  readonly address: string | null;
  /** The pod's phase, `Terminating` while it is being deleted (as kubectl shows it), or null. */
  readonly phase: string | null;
  /** Whether the pod is being deleted (its `deletionTimestamp` is set). */
  readonly terminating: boolean;
  /** The kubelet's `Ready` condition: true, false, or null when it reports none. */
  readonly podReady: boolean | null;
  /** When the pod was created (ISO 8601), or null. */
  readonly created: string | null;
  /** The ServiceAccount the pod runs as (`default` when the API answered none), or null when unread. */
  readonly serviceAccount: string | null;
  /** Why the pod's entry could not be read (a field of the wrong type), or null. */
  readonly error: string | null;
}

/** The replicas listed. */
export interface ReplicaList {
  /** The pods, sorted by name, at most `maxReplicas`. */
  readonly pods: readonly ReplicaPod[];
  /** Whether more pods match than `maxReplicas` (or than the pages read): the rest are not listed. */
  readonly truncated: boolean;
}

/** Options of {@link listReplicas}, all required (the fleet view resolves them). */
export interface ListReplicasOptions {
  /** The namespace of the pods. */
  readonly namespace: string;
  /** The Deployment's label selector (`app=ctl`). */
  readonly selector: string;
  /** The most pods listed. */
  readonly maxReplicas: number;
  /** How long the listing may take, every page together. Milliseconds. */
  readonly timeoutMs: number;
  /** Aborts the listing. */
  readonly signal?: AbortSignal;
}

/** The most pages followed: a list that needs more is reported truncated. */
const MAX_PAGES = 10;
/** The most conditions of one pod looked through for `Ready`. */
const MAX_CONDITIONS = 32;
const MAX_ECHOED = 200;
/** RFC 1123 subdomain: what a pod's name is. */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** RFC 1123 label: what a namespace's name is. */
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const PHASE = /^[A-Za-z]{1,32}$/;

/** Why `namespace` is no namespace's name (an RFC 1123 label of at most 63 characters), or undefined. */
export function namespaceProblem(namespace: string): string | undefined {
  if (namespace.length > 63 || !LABEL.test(namespace)) {
    return `${quoteText(namespace, 80)} is not a namespace's name (lower-case letters, digits and "-", at most 63)`;
  }
  return undefined;
}

/** A label's name part: at most 63 characters, alphanumeric at both ends, `-`, `_`, `.` inside. */
const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

function keyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length > 253 || !SUBDOMAIN.test(prefix)))
    return `label key ${quoteText(key, 80)} has an invalid prefix`;
  if (!LABEL_NAME.test(name)) return `label key ${quoteText(key, 80)} is not a label name`;
  return undefined;
}

function valueProblem(value: string): string | undefined {
  if (value === '' || LABEL_NAME.test(value)) return undefined;
  return `label value ${quoteText(value, 80)} is not a label value (at most 63 letters, digits, "-", "_", ".")`;
}

const SET_REQUIREMENT = /^([^\s!=<>(),]+)\s+(in|notin)\s+\(([^()]*)\)$/;
const COMPARE_REQUIREMENT = /^([^\s!=<>(),]+)\s*(==|=|!=|<|>)\s*([^\s!=<>(),]*)$/;
const EXISTS_REQUIREMENT = /^(!?)\s*([^\s!=<>(),]+)$/;

/**
 * Why `selector` is not a label selector as the API server parses it (`app=ctl`,
 * `app in (a,b),!canary`, `tier!=web`), or undefined. An empty selector is refused: it would
 * select every pod of the namespace.
 */
export function labelSelectorProblem(selector: string): string | undefined {
  if (selector.length > 4096) return 'a label selector of at most 4096 characters';
  if (selector.trim() === '') return 'a label selector that selects something (an empty one matches every pod of the namespace)';
  // Commas split requirements, except inside a set's parentheses.
  const requirements: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    if (depth < 0 || depth > 1) return `unbalanced parentheses in ${quoteText(selector, 80)}`;
    if (c === ',' && depth === 0) {
      requirements.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) return `unbalanced parentheses in ${quoteText(selector, 80)}`;
  requirements.push(selector.slice(start));
  for (const raw of requirements) {
    const requirement = raw.trim();
    if (requirement === '') return `an empty requirement in ${quoteText(selector, 80)}`;
    const set = SET_REQUIREMENT.exec(requirement);
    if (set !== null) {
      const problem =
        keyProblem(set[1]!) ?? set[3]!.split(',').reduce<string | undefined>((p, v) => p ?? valueProblem(v.trim()), undefined);
      if (problem !== undefined) return problem;
      continue;
    }
    const compare = COMPARE_REQUIREMENT.exec(requirement);
    if (compare !== null) {
      const [, key, operator, value] = compare as unknown as [string, string, string, string];
      const problem =
        keyProblem(key) ??
        ((operator === '<' || operator === '>') && !/^-?\d+$/.test(value)
          ? `${quoteText(requirement, 80)} compares with ${quoteText(value, 40)}, not an integer`
          : valueProblem(value));
      if (problem !== undefined) return problem;
      continue;
    }
    const exists = EXISTS_REQUIREMENT.exec(requirement);
    if (exists !== null) {
      const problem = keyProblem(exists[2]!);
      if (problem !== undefined) return problem;
      continue;
    }
    return `${quoteText(requirement, 80)} is no requirement (key, !key, key=value, key!=value, key in (a,b), key notin (a,b))`;
  }
  return undefined;
}

/** A field of an untrusted object, read without trusting its getters. */
function field(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as Record<string, unknown>)[key];
}

/** A time as the API answers it (a `Date` from client-node, a string in raw JSON), as ISO 8601; undefined when it is no time. */
function timeOf(value: unknown): string | undefined {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' && value.length <= 64 ? Date.parse(value) : NaN;
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : undefined;
}

/** A pod whose entry could not be read: its name if it had one, and why. */
function unreadable(name: string, error: string): ReplicaPod {
  return { name, uid: null, address: null, phase: null, terminating: false, podReady: null, created: null, serviceAccount: null, error };
}

/** The pod's kubelet `Ready` condition, or undefined when `conditions` is not a list. */
function readyOf(conditions: unknown): boolean | null | undefined {
  if (conditions === undefined || conditions === null) return null;
  if (!Array.isArray(conditions)) return undefined;
  for (const condition of conditions.slice(0, MAX_CONDITIONS)) {
    if (field(condition, 'type') !== 'Ready') continue;
    const status = field(condition, 'status');
    return status === 'True' ? true : status === 'False' ? false : null;
  }
  return null;
}

/** One entry of the list, each field checked: a wrong one makes the pod an error, never a crash. */
function readPod(item: unknown, index: number): ReplicaPod {
  const placeholder = `(pod ${index})`;
  if (typeof item !== 'object' || item === null || Array.isArray(item))
    return unreadable(placeholder, 'the API answered an entry that is not a pod');
  const metadata = field(item, 'metadata');
  const status = field(item, 'status');
  const name = field(metadata, 'name');
  if (typeof name !== 'string' || name.length > 253 || !SUBDOMAIN.test(name)) {
    return unreadable(
      placeholder,
      `the API answered a pod without a valid name (${typeof name === 'string' ? quoteText(name, 64) : typeof name})`,
    );
  }
  const wrong = (what: string): ReplicaPod => unreadable(name, `the API answered this pod with a ${what} of the wrong type`);
  const uid = field(metadata, 'uid');
  if (uid !== undefined && (typeof uid !== 'string' || uid.length > 128)) return wrong('metadata.uid');
  const deletion = field(metadata, 'deletionTimestamp');
  if (deletion !== undefined && deletion !== null && timeOf(deletion) === undefined) return wrong('metadata.deletionTimestamp');
  const created = field(metadata, 'creationTimestamp');
  if (created !== undefined && created !== null && timeOf(created) === undefined) return wrong('metadata.creationTimestamp');
  const phase = field(status, 'phase');
  if (phase !== undefined && (typeof phase !== 'string' || !PHASE.test(phase))) return wrong('status.phase');
  const ip = field(status, 'podIP');
  if (ip !== undefined && ip !== '' && (typeof ip !== 'string' || isIP(ip) === 0)) return wrong('status.podIP');
  const podReady = readyOf(field(status, 'conditions'));
  if (podReady === undefined) return wrong('status.conditions');
  const account = field(field(item, 'spec'), 'serviceAccountName');
  if (account !== undefined && account !== null && (typeof account !== 'string' || account.length > 253 || !SUBDOMAIN.test(account)))
    return wrong('spec.serviceAccountName');
  const terminating = deletion !== undefined && deletion !== null;
  return {
    name,
    uid: typeof uid === 'string' && uid !== '' ? uid : null,
    address: typeof ip === 'string' && ip !== '' ? ip : null,
    phase: terminating ? 'Terminating' : typeof phase === 'string' ? phase : null,
    terminating,
    podReady,
    created: created === undefined || created === null ? null : timeOf(created)!,
    serviceAccount: typeof account === 'string' ? account : 'default',
    error: null,
  };
}

/** The entry, or an error entry when reading it throws (a getter of a host's own client, a Proxy). */
function readPodSafely(item: unknown, index: number): ReplicaPod {
  try {
    return readPod(item, index);
  } catch {
    return unreadable(`(pod ${index})`, 'the API answered an entry that could not be read');
  }
}

/** The next page's token, or undefined on the last page. */
function continueOf(list: unknown): string | undefined {
  const metadata = field(list, 'metadata');
  const token = field(metadata, '_continue') ?? field(metadata, 'continue');
  return typeof token === 'string' && token !== '' ? token : undefined;
}

/**
 * Lists the controller's replicas: the pods of its Deployment, by the Deployment's label selector,
 * at most `maxReplicas` of them (more is reported as `truncated`), pages followed within one
 * `timeoutMs` for them all.
 *
 * Pods by selector rather than the EndpointSlices of a headless Service: every Deployment has a
 * selector, a pod carries its phase, readiness and start even while it is not ready (an
 * EndpointSlice lists a not-ready replica without why, and none that has no address yet), and no
 * headless Service nor `discovery.k8s.io` RBAC is needed. The Role needed is `list` on `pods` in
 * the namespace.
 *
 * Each pod is read field by field (name, uid, creation and deletion times, phase, IP, the `Ready`
 * condition); a field of the wrong type makes that pod an entry with an `error`, never a throw.
 *
 * @throws Error `listReplicas: …` when the call fails (with the API server's status and message),
 *   takes longer than `timeoutMs`, or answers something that is not a pod list.
 */
export async function listReplicas(api: PodsApi, options: ListReplicasOptions): Promise<ReplicaList> {
  const { namespace, selector, maxReplicas, timeoutMs, signal } = options;
  const deadline = performance.now() + timeoutMs;
  const items: unknown[] = [];
  let token: string | undefined;
  let truncated = false;
  for (let page = 0; ; page++) {
    if (page === MAX_PAGES) {
      truncated = true;
      break;
    }
    const left = Math.max(1, Math.ceil(deadline - performance.now()));
    const param = {
      namespace,
      labelSelector: selector,
      limit: maxReplicas + 1 - items.length,
      ...(token === undefined ? {} : { _continue: token }),
    };
    let list: unknown;
    try {
      list = await withTimeout(
        () => api.listNamespacedPod(param),
        left,
        () => new Error(`no answer within ${timeoutMs} ms`),
        signal,
      );
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new Error(
        `listReplicas: listing the pods of namespace ${quoteText(namespace, 64)} with selector ${quoteText(selector, MAX_ECHOED)} failed: ${apiErrorReason(err, MAX_ECHOED)} (the ServiceAccount needs a Role that may list pods in the namespace)`,
        { cause: err },
      );
    }
    let pageItems: unknown;
    try {
      pageItems = field(list, 'items');
      token = continueOf(list);
    } catch {
      pageItems = undefined;
    }
    if (!Array.isArray(pageItems)) throw new Error('listReplicas: the API answered something that is not a pod list (no items array)');
    // A list that ignored `limit` is cut here: more than one past the bound is never looked at.
    for (const item of pageItems.slice(0, maxReplicas + 1 - items.length)) items.push(item);
    if (items.length > maxReplicas) {
      truncated = true;
      break;
    }
    if (token === undefined) break;
  }
  const seen = new Set<string>();
  const pods = items.slice(0, maxReplicas).map((item, index) => {
    const pod = readPodSafely(item, index);
    if (pod.error !== null || !seen.has(pod.name)) {
      seen.add(pod.name);
      return pod;
    }
    return unreadable(`${pod.name} (${index})`, 'the API answered this pod name twice');
  });
  pods.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { pods, truncated };
}
