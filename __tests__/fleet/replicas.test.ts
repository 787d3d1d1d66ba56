/** listReplicas and the selector check: the pods of a Deployment, each field checked, bounded. */
import type { CoreV1Api } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { labelSelectorProblem, listReplicas, namespaceProblem, type PodsApi } from '../../lib/kubernetes/replicas';

// client-node's CoreV1Api (object parameters) is a PodsApi as it is.
const fits: (api: CoreV1Api) => PodsApi = (api) => api;
void fits;

function pod(name: string, ip: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    metadata: { name, uid: `uid-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' },
    status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
    ...extra,
  };
}

function api(pages: unknown[], calls: unknown[] = []): PodsApi {
  let page = 0;
  return {
    listNamespacedPod: (param) => {
      calls.push(param);
      return Promise.resolve(pages[page++] as never);
    },
  };
}

const OPTIONS = { namespace: 'ctl', selector: 'app=ctl', maxReplicas: 100, timeoutMs: 1000 };

describe('listReplicas', () => {
  it('lists the pods by selector, sorted, each field read', async () => {
    const calls: unknown[] = [];
    const list = await listReplicas(
      api([{ items: [pod('b', '10.0.0.2'), pod('a', 'fd00::1', { metadata: { name: 'a', deletionTimestamp: new Date(0) } })] }], calls),
      OPTIONS,
    );
    expect(calls).toEqual([{ namespace: 'ctl', labelSelector: 'app=ctl', limit: 101 }]);
    expect(list).toEqual({
      truncated: false,
      pods: [
        {
          name: 'a',
          uid: null,
          address: 'fd00::1',
          phase: 'Terminating',
          terminating: true,
          podReady: true,
          created: null,
          serviceAccount: 'default',
          error: null,
        },
        {
          name: 'b',
          uid: 'uid-b',
          address: '10.0.0.2',
          phase: 'Running',
          terminating: false,
          serviceAccount: 'default',
          podReady: true,
          created: '2026-01-01T00:00:00.000Z',
          error: null,
        },
      ],
    });
  });

  it('reports pods with fields of the wrong type as errors, never throws', async () => {
    const hostile = [
      'not a pod',
      null,
      { metadata: { name: 5 } },
      { metadata: { name: 'UPPER' } },
      pod('ip', '999.1.1.1'),
      pod('phase', '10.0.0.1', { status: { phase: { x: 1 } } }),
      pod('conditions', '10.0.0.1', { status: { conditions: 'Ready' } }),
      pod('uid', '10.0.0.1', { metadata: { name: 'uid', uid: 7 } }),
      pod('time', '10.0.0.1', { metadata: { name: 'time', creationTimestamp: 'yesterday' } }),
      pod('account', '10.0.0.1', { spec: { serviceAccountName: ['lb-controller'] } }),
      pod('dup', '10.0.0.1'),
      pod('dup', '10.0.0.2'),
      pod('pending', '10.0.0.1', { status: { phase: 'Pending' } }),
      new Proxy(
        {},
        {
          get() {
            throw new Error('trap');
          },
        },
      ),
    ];
    const list = await listReplicas(api([{ items: hostile }]), OPTIONS);
    const byName = Object.fromEntries(list.pods.map((p) => [p.name, p.error]));
    expect(byName).toEqual({
      '(pod 0)': 'the API answered an entry that is not a pod',
      '(pod 1)': 'the API answered an entry that is not a pod',
      '(pod 2)': 'the API answered a pod without a valid name (number)',
      '(pod 3)': 'the API answered a pod without a valid name ("UPPER")',
      '(pod 13)': 'the API answered an entry that could not be read',
      account: 'the API answered this pod with a spec.serviceAccountName of the wrong type',
      ip: 'the API answered this pod with a status.podIP of the wrong type',
      phase: 'the API answered this pod with a status.phase of the wrong type',
      conditions: 'the API answered this pod with a status.conditions of the wrong type',
      uid: 'the API answered this pod with a metadata.uid of the wrong type',
      time: 'the API answered this pod with a metadata.creationTimestamp of the wrong type',
      dup: null,
      'dup (11)': 'the API answered this pod name twice',
      pending: null,
    });
    expect(list.pods.find((p) => p.name === 'pending')).toMatchObject({ address: null, phase: 'Pending' });
  });

  it('bounds the list by maxReplicas: a list that ignores limit is cut, more is truncated', async () => {
    const many = Array.from({ length: 500 }, (_, i) => pod(`p${String(i).padStart(3, '0')}`, '10.0.0.1'));
    const list = await listReplicas(api([{ items: many }]), { ...OPTIONS, maxReplicas: 10 });
    expect(list.pods).toHaveLength(10);
    expect(list.truncated).toBe(true);
    const exact = await listReplicas(api([{ items: many.slice(0, 10) }]), { ...OPTIONS, maxReplicas: 10 });
    expect(exact.truncated).toBe(false);
  });

  it('follows continue tokens (both spellings) within the bound', async () => {
    const calls: Array<Record<string, unknown>> = [];
    const list = await listReplicas(
      api(
        [
          { items: [pod('a', '10.0.0.1')], metadata: { _continue: 't1' } },
          { items: [pod('b', '10.0.0.2')], metadata: { continue: 't2' } },
          { items: [pod('c', '10.0.0.3')], metadata: {} },
        ],
        calls,
      ),
      OPTIONS,
    );
    expect(list.pods.map((p) => p.name)).toEqual(['a', 'b', 'c']);
    expect(calls.map((c) => [c['limit'], c['_continue']])).toEqual([
      [101, undefined],
      [100, 't1'],
      [99, 't2'],
    ]);
    const endless = { listNamespacedPod: () => Promise.resolve({ items: [], metadata: { _continue: 'again' } }) };
    expect(await listReplicas(endless, OPTIONS)).toEqual({ pods: [], truncated: true });
  });

  it('fails with the API server reason, a timeout, or an answer that is no list', async () => {
    const refused = {
      listNamespacedPod: () =>
        Promise.reject(
          Object.assign(new Error('HTTP-Code: 403\nMessage: …'), {
            code: 403,
            body: '{"kind":"Status","message":"pods is forbidden: User \\"system:serviceaccount:ctl:ctl\\" cannot list resource \\"pods\\""}',
          }),
        ),
    };
    await expect(listReplicas(refused, OPTIONS)).rejects.toThrow(
      'listReplicas: listing the pods of namespace "ctl" with selector "app=ctl" failed: HTTP 403: pods is forbidden: User "system:serviceaccount:ctl:ctl" cannot list resource "pods" (the ServiceAccount needs a Role that may list pods in the namespace)',
    );
    const hung = { listNamespacedPod: () => new Promise<never>(() => undefined) };
    const started = performance.now();
    await expect(listReplicas(hung, { ...OPTIONS, timeoutMs: 100 })).rejects.toThrow(/failed: no answer within 100 ms/);
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(listReplicas(api([{ kind: 'Status' }]), OPTIONS)).rejects.toThrow(
      'listReplicas: the API answered something that is not a pod list (no items array)',
    );
  });
});

describe('labelSelectorProblem and namespaceProblem', () => {
  it('accepts the selector syntax of the API server', () => {
    for (const selector of [
      'app=ctl',
      'app==ctl',
      'app=ctl,tier!=web',
      'app in (a, b),!canary',
      'example.com/part-of notin (x)',
      'app',
      'app=',
      'rank>3',
    ]) {
      expect([selector, labelSelectorProblem(selector)]).toEqual([selector, undefined]);
    }
  });

  it('refuses what the API server would refuse, and an empty selector', () => {
    expect(labelSelectorProblem('')).toMatch(/selects something/);
    expect(labelSelectorProblem('app in (a')).toMatch(/unbalanced parentheses/);
    expect(labelSelectorProblem('=ctl')).toMatch(/is no requirement/);
    expect(labelSelectorProblem('app=ctl,')).toMatch(/empty requirement/);
    expect(labelSelectorProblem('app=a b')).toMatch(/is no requirement/);
    expect(labelSelectorProblem('-app=ctl')).toMatch(/is not a label name/);
    expect(labelSelectorProblem(`app=${'x'.repeat(64)}`)).toMatch(/is not a label value/);
    expect(labelSelectorProblem('rank>three')).toMatch(/not an integer/);
    expect(namespaceProblem('ctl-system')).toBeUndefined();
    expect(namespaceProblem('Ctl')).toMatch(/not a namespace's name/);
  });
});
