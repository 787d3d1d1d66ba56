import express from 'express';
import { Registry } from 'prom-client';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createControllerMetrics, type ControllerMetrics } from '../../lib/metrics';
import { createPipeline, createWorkQueue, type PipelineMetrics } from '../../lib/pipeline';
import { MAX_DEPLOY_ERRORS } from '../../lib/pipeline/records';
import { eventually } from '../helpers/eventually';
import { sampleValue, type Exposition } from '../metrics/helpers/exposition-parser';
import { metricsApp, scrape } from '../metrics/helpers/server';
import { createIntrospectionState } from '../../lib/state/store';
import { listen, request } from '../helpers/http';

async function setup() {
  const state = createIntrospectionState();
  const registry = new Registry();
  const metrics = createControllerMetrics(registry, state);
  const pipeline = createPipeline(state, { metrics });
  const router = createIntrospectionRouter(state, { pprof: false });
  const app = express();
  app.use(router);
  const served = await listen(app);
  const get = async (path: string): Promise<unknown> => {
    const res = await request(served.origin + path);
    return res.headers['content-type']?.startsWith('application/json') ? res.json() : res.text;
  };
  const metric = async (name: string): Promise<number> => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await registry.metrics())?.[1]);
  const close = async () => {
    await router.close();
    await served.close();
  };
  return { state, pipeline, get, metric, close };
}

const ENDPOINTS = ['lb-pod-0', 'lb-pod-1', 'lb-pod-2'];

describe('reconciliation pipeline', () => {
  it('records a successful cycle once: variables, correlated events, metrics, rendered config', async () => {
    const t = await setup();
    try {
      const deployed: string[] = [];
      const result = await t.pipeline.run({
        trigger: 'resource-change',
        reason: 'ingress default/web updated',
        render: async () => 'global\n  maxconn 100\n',
        validate: (text) => text.startsWith('global'),
        endpoints: ENDPOINTS,
        deploy: async (endpoint) => void deployed.push(endpoint),
      });
      expect(deployed).toEqual(ENDPOINTS);
      const id = result.correlationId;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const pipeline = (await t.get('/debug/vars/pipeline')) as Record<string, unknown>;
      expect(pipeline).toMatchObject({
        correlation_id: id,
        trigger: 'resource-change',
        reason: 'ingress default/web updated',
        status: 'succeeded',
        failed_phase: null,
        endpoints_succeeded: 3,
        endpoints_failed: 0,
        last_success: { correlation_id: id, ended: pipeline['ended'] },
        cycles: { total: 1, succeeded: 1, failed: 0 },
      });
      expect(await t.get('/debug/vars/pipeline?field={.phases.deploy.endpoints[*].status}&output=text')).toBe(
        'succeeded succeeded succeeded',
      );
      expect(await t.get('/debug/vars/validated?field={.correlation_id}')).toBe(id);
      expect(await t.get('/debug/vars/validated?field={.size}')).toBe(21);
      expect(await t.get('/debug/vars/rendered?field={.config}&output=text')).toBe('global\n  maxconn 100\n');
      expect((await t.get('/debug/vars/errors')) as object).toEqual({
        render: null,
        validate: null,
        deploy: {},
        config_parse: null,
        last_error_timestamp: null,
      });
      const events = (await t.get(`/debug/vars/events?correlation_id=${id}`)) as Array<{ type: string; correlation_id: string }>;
      expect(events.map((e) => e.type)).toEqual([
        'reconciliation.triggered',
        'config.rendered',
        'config.validated',
        'deployment.started',
        'deployment.endpoint_updated',
        'deployment.endpoint_updated',
        'deployment.endpoint_updated',
        'deployment.completed',
        'reconciliation.completed',
      ]);
      expect(events.every((e) => e.correlation_id === id)).toBe(true);
      expect(await t.metric('ctl_reconciliation_total')).toBe(1);
      expect(await t.metric('ctl_reconciliation_errors_total')).toBe(0);
      expect(await t.metric('ctl_validation_total')).toBe(1);
      expect(await t.metric('ctl_deployment_total')).toBe(1);
      expect(t.state.progress()[0]).toMatchObject({ activity: 'reconciliation', count: 1 });
      expect((await t.get('/debug/vars')) as { vars: string[] }).toEqual({
        vars: expect.arrayContaining(['pipeline', 'validated', 'errors']),
      });
      expect(Object.keys((await t.get('/debug/vars/state')) as object)).toEqual(
        expect.arrayContaining(['pipeline', 'validated', 'errors']),
      );
    } finally {
      await t.close();
    }
  });

  it('shows which phase failed and why: validation fails, the deployment is skipped, the error is rethrown', async () => {
    const t = await setup();
    try {
      await t.pipeline.run({ trigger: 't', render: () => 'global\n', validate: () => true, endpoints: ['a'], deploy: () => undefined });
      const goodId = ((await t.get('/debug/vars/validated')) as { correlation_id: string }).correlation_id;
      const invalid = new Error('haproxy -c: unknown keyword "maxconnn" at line 2');
      let deployedAfterInvalid = false;
      await expect(
        t.pipeline.run({
          trigger: 'config-change',
          render: () => 'global\n  maxconnn 1\n',
          validate: () => {
            throw invalid;
          },
          endpoints: ['a'],
          deploy: () => void (deployedAfterInvalid = true),
        }),
      ).rejects.toBe(invalid);
      expect(deployedAfterInvalid).toBe(false);
      expect(await t.get('/debug/vars/pipeline?field={.failed_phase}')).toBe('validate');
      expect(await t.get('/debug/vars/pipeline?field={.phases.validate.error}')).toBe('haproxy -c: unknown keyword "maxconnn" at line 2');
      expect(await t.get('/debug/vars/pipeline?field={.phases.deploy.status}')).toBe('skipped');
      expect(await t.get('/debug/vars/errors?field={.validate.error}')).toBe('haproxy -c: unknown keyword "maxconnn" at line 2');
      // rendered shows the config that failed; validated still the last good one.
      expect(await t.get('/debug/vars/rendered?field={.config}&output=text')).toBe('global\n  maxconnn 1\n');
      expect(await t.get('/debug/vars/validated?field={.correlation_id}')).toBe(goodId);
      expect(await t.metric('ctl_validation_errors_total')).toBe(1);
      expect(await t.metric('ctl_reconciliation_errors_total')).toBe(1);
      expect(await t.get('/debug/vars/pipeline?field={.cycles}')).toEqual({ total: 2, succeeded: 1, failed: 1 });
      // The next good cycle clears the validation error.
      await t.pipeline.run({ trigger: 't', render: () => 'global\n', validate: () => undefined });
      expect(await t.get('/debug/vars/errors?field={.validate}')).toBeNull();
      expect(typeof (await t.get('/debug/vars/errors?field={.last_error_timestamp}'))).toBe('string');
    } finally {
      await t.close();
    }
  });

  it('tries every endpoint, records each outcome, and rethrows the first failure', async () => {
    const t = await setup();
    try {
      const tried: string[] = [];
      const down = new Error('dataplane API answered 503');
      const failing = t.pipeline.run({
        trigger: 'resync',
        render: () => 'global\n',
        endpoints: ENDPOINTS,
        deploy: async (endpoint) => {
          tried.push(endpoint);
          if (endpoint === 'lb-pod-1') throw down;
        },
      });
      await expect(failing).rejects.toBe(down);
      expect(tried).toEqual(ENDPOINTS);
      expect(await t.get('/debug/vars/pipeline?field={.failed_phase}')).toBe('deploy');
      expect(await t.get('/debug/vars/pipeline?field={.endpoints_failed}')).toBe(1);
      expect(await t.get('/debug/vars/pipeline?field={.endpoints_succeeded}')).toBe(2);
      expect(await t.get('/debug/vars/pipeline?field={.phases.deploy.endpoints[?(@.status=="failed")].endpoint}')).toEqual(['lb-pod-1']);
      expect(await t.get('/debug/vars/errors?field={.deploy.lb-pod-1.error}')).toBe('dataplane API answered 503');
      const failures = (await t.get('/debug/vars/events?type=deployment.endpoint_failed')) as Array<{ details: Record<string, unknown> }>;
      expect(failures).toHaveLength(1);
      expect(failures[0]!.details).toEqual({ endpoint: 'lb-pod-1', duration_ms: expect.any(Number), error: 'dataplane API answered 503' });
      expect(await t.metric('ctl_deployment_errors_total')).toBe(1);
      // A later successful deployment to that endpoint clears its error.
      await t.pipeline.run({ trigger: 'resync', render: () => 'global\n', endpoints: ['lb-pod-1'], deploy: () => undefined });
      expect(await t.get('/debug/vars/errors?field={.deploy}')).toEqual({});
    } finally {
      await t.close();
    }
  });

  it('keeps a deploy failure per endpoint whatever the endpoint is named, served as an own key and selectable', async () => {
    const NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf', '__defineGetter__'];
    const t = await setup();
    try {
      await expect(
        t.pipeline.run({
          trigger: 'resync',
          render: () => 'global\n',
          endpoints: NAMES,
          deploy: (endpoint) => {
            throw new Error(`${endpoint} unreachable`);
          },
        }),
      ).rejects.toThrow('__proto__ unreachable');
      const deploy = (await t.get('/debug/vars/errors?field={.deploy}')) as Record<string, { error: string }>;
      expect(Object.keys(deploy)).toEqual(NAMES);
      for (const name of NAMES)
        expect(Object.getOwnPropertyDescriptor(deploy, name)?.value).toMatchObject({ error: `${name} unreachable` });
      for (const name of NAMES) {
        expect(await t.get(`/debug/vars/errors?field={.deploy.${name}.error}`)).toBe(`${name} unreachable`);
        expect(await t.get(`/debug/vars/state?field={.errors.deploy.${name}.error}`)).toBe(`${name} unreachable`);
      }
      // Each clears when its endpoint next deploys; the rest stay.
      await t.pipeline.run({ trigger: 'resync', render: () => 'global\n', endpoints: ['__proto__', 'toString'], deploy: () => undefined });
      expect(Object.keys((await t.get('/debug/vars/errors?field={.deploy}')) as object)).toEqual(
        NAMES.filter((n) => n !== '__proto__' && n !== 'toString'),
      );
    } finally {
      await t.close();
    }
  });

  it('keeps the latest deploy errors of at most MAX_DEPLOY_ERRORS endpoints, dropping the oldest', async () => {
    const t = await setup();
    try {
      const endpoints = Array.from({ length: MAX_DEPLOY_ERRORS + 5 }, (_, i) => `lb-pod-${i}`);
      await expect(
        t.pipeline.run({
          trigger: 'resync',
          render: () => 'global\n',
          endpoints,
          deploy: () => {
            throw new Error('down');
          },
        }),
      ).rejects.toThrow('down');
      const kept = Object.keys((await t.get('/debug/vars/errors?field={.deploy}')) as object);
      expect(kept).toEqual(endpoints.slice(5));
      // A failing endpoint again becomes the newest.
      await expect(
        t.pipeline.run({
          trigger: 'resync',
          render: () => 'global\n',
          endpoints: ['lb-pod-5', 'lb-pod-new'],
          deploy: () => {
            throw new Error('down');
          },
        }),
      ).rejects.toThrow('down');
      const after = Object.keys((await t.get('/debug/vars/errors?field={.deploy}')) as object);
      expect(after).toHaveLength(MAX_DEPLOY_ERRORS);
      expect(after.slice(-2)).toEqual(['lb-pod-5', 'lb-pod-new']);
      expect(after[0]).toBe('lb-pod-7');
    } finally {
      await t.close();
    }
  });

  it('records render failures and configuration parse errors', async () => {
    const t = await setup();
    try {
      await expect(
        t.pipeline.run({ trigger: 't', render: () => Promise.reject(new Error('template haproxy.cfg: unexpected }}')) }),
      ).rejects.toThrow('unexpected }}');
      expect(await t.get('/debug/vars/pipeline?field={.phases.render.error}')).toBe('template haproxy.cfg: unexpected }}');
      expect(await t.get('/debug/vars/pipeline?field={.phases.validate.status}')).toBe('skipped');
      t.pipeline.configRejected(new SyntaxError('config.yaml line 3: bad indentation'));
      expect(await t.get('/debug/vars/errors?field={.config_parse.error}')).toBe('config.yaml line 3: bad indentation');
      t.pipeline.configLoaded({ templates: {}, watched_resources: [] }, 'v7');
      expect(await t.get('/debug/vars/errors?field={.config_parse}')).toBeNull();
      expect(await t.get('/debug/vars/config?field={.version}')).toBe('v7');
    } finally {
      await t.close();
    }
  });

  it('opens the config-loaded readiness gate with the first successful cycle', async () => {
    const state = createIntrospectionState();
    const pipeline = createPipeline(state);
    expect(state.readinessGates()).toEqual([expect.objectContaining({ name: 'config-loaded', open: false })]);
    await expect(
      pipeline.run({
        trigger: 't',
        render: () => {
          throw new Error('no templates yet');
        },
      }),
    ).rejects.toThrow('no templates yet');
    expect(state.readinessGates()[0]!.open).toBe(false);
    await pipeline.run({ trigger: 't', render: () => 'global\n' });
    expect(state.readinessGates()[0]!.open).toBe(true);
    expect(state.openReadinessGate('no-such-gate')).toBe(false);
  });

  it('rejects wrong descriptions and a second pipeline on the same state', async () => {
    const state = createIntrospectionState();
    const pipeline = createPipeline(state);
    await expect(pipeline.run({ trigger: '', render: () => '' })).rejects.toThrow('trigger must be a non-empty string');
    await expect(pipeline.run({ trigger: 't', render: () => '', endpoint: ['a'] } as never)).rejects.toThrow(
      'pipeline.run: unknown field "endpoint" (did you mean "endpoints"?)',
    );
    expect(() => createPipeline(state)).toThrow('variable "pipeline" is already published on this state');
    expect(() => createPipeline(createIntrospectionState(), { metric: {} } as never)).toThrow(
      'createPipeline: unknown option "metric" (did you mean "metrics"?); known options: metrics',
    );
    expect(() => createPipeline(createIntrospectionState(), null as never)).toThrow('createPipeline: options must be an object');
    expect(() => createPipeline(null as never)).toThrow(
      'createPipeline: the first argument must be the IntrospectionState (from createIntrospectionState()), got null',
    );
    expect(() => createPipeline({ state: createIntrospectionState() } as never)).toThrow(
      new TypeError('createPipeline: the first argument is the state; options come second: createPipeline(state, { metrics })'),
    );
  });

  it('refuses metrics without a driver (or with half of one) where they are given; a wrapper that passes the driver on gets everything', async () => {
    const registry = new Registry();
    const real = createControllerMetrics(registry, undefined, { controllerRuntime: { controller: 'lb' } });
    // A wrapper with the record calls but no driver would lose controller-runtime's families and
    // the exemplars without a word: refused where it is made.
    const { driver: _driver, ...withoutDriver } = real;
    const why =
      'option "metrics" must be the result of createControllerMetrics(), or a PipelineMetrics: recordValidation, recordDeployment and a driver with recordReconciliation';
    expect(() => createPipeline(createIntrospectionState(), { metrics: withoutDriver as never })).toThrow(`createPipeline: ${why}`);
    expect(() => createWorkQueue({ metrics: withoutDriver as never })).toThrow(`createWorkQueue: ${why}`);
    const halfDriver = { ...real, driver: { now: real.driver.now, controllerRuntime: {}, recordReconciliation: () => undefined } };
    expect(() => createPipeline(createIntrospectionState(), { metrics: halfDriver as never })).toThrow(`createPipeline: ${why}`);

    // A wrapper that passes the driver on gets controller-runtime's result and its work queue.
    const calls: string[] = [];
    const wrapper: ControllerMetrics = {
      ...real,
      recordDeployment: (seconds, ok, id) => {
        calls.push('deployment');
        real.recordDeployment(seconds, ok, id);
      },
    };
    const state = createIntrospectionState();
    const pipeline = createPipeline(state, { metrics: wrapper });
    const queue = createWorkQueue({ metrics: wrapper });
    expect(queue.name).toBe('lb');
    await pipeline.run({ trigger: 't', render: () => 'x', endpoints: ['a'], deploy: async () => undefined });
    expect(calls).toEqual(['deployment']);
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_reconcile_total{controller="lb",result="success"} 1');
    expect(text).toContain('workqueue_depth{name="lb",controller="lb"} 0');
  });
});

describe('the pipeline on a work queue', () => {
  function setupQueue(controllerRuntime = true) {
    const state = createIntrospectionState();
    const registry = new Registry();
    const metrics = createControllerMetrics(registry, state, { ...(controllerRuntime && { controllerRuntime: { controller: 'lb' } }) });
    const pipeline = createPipeline(state, { metrics });
    const queue = createWorkQueue({ metrics, baseDelayMs: 1 });
    const app = metricsApp(registry);
    return { state, pipeline, queue, app };
  }
  const spec = (fail: () => boolean, seen?: (key: string) => void) => (key: string) => ({
    trigger: 'resource-change',
    reason: key,
    render: () => {
      seen?.(key);
      return 'global\n';
    },
    validate: () => !fail(),
  });

  it('reconciles queued keys, retries a failed one with backoff until it succeeds, and records each cycle', async () => {
    const { pipeline, queue, app } = setupQueue();
    const seen: string[] = [];
    const failures: Array<[string, string]> = [];
    let failing = 2;
    const workers = pipeline.processQueue(queue, {
      cycle: spec(
        () => failing-- > 0,
        (key) => seen.push(key),
      ),
      onError: (err, key) => failures.push([key, (err as Error).message]),
    });
    queue.add('default/web');
    await eventually(() => seen.length === 3 && queue.numRequeues('default/web') === 0, {
      timeoutMs: 5000,
      intervalMs: 5,
      what: 'the key reconciled after two failures',
    });
    await workers.close();
    expect(seen).toEqual(['default/web', 'default/web', 'default/web']);
    expect(failures).toEqual([
      ['default/web', 'configuration rejected by the validator'],
      ['default/web', 'configuration rejected by the validator'],
    ]);
    const e = await scrape(app);
    const lb = { controller: 'lb' };
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { ...lb, result: 'success' })).toBe(1);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { ...lb, result: 'error' })).toBe(2);
    expect(sampleValue(e, 'controller_runtime_reconcile_errors_total', lb)).toBe(2);
    expect(sampleValue(e, 'ctl_reconciliation_total')).toBe(3);
    // The queue shut down with the workers: its series left.
    expect(sampleValue(e, 'workqueue_retries_total', { name: 'lb', controller: 'lb' })).toBeUndefined();
    expect(sampleValue(e, 'controller_runtime_max_concurrent_reconciles', lb)).toBe(1);
  });

  it('counts its workers and the cycles running, and a resync after success as requeue_after', async () => {
    const { pipeline, queue, app } = setupQueue();
    let release: () => void = () => undefined;
    const running = new Set<string>();
    let seenDuring: Exposition | undefined;
    const workers = pipeline.processQueue(queue, {
      workers: 3,
      requeueAfterMs: 60_000,
      cycle: (key) => ({
        trigger: 'resync',
        render: async () => {
          running.add(key);
          if (running.size === 2) {
            seenDuring = await scrape(app);
            release();
          } else await new Promise<void>((resolve) => (release = resolve));
          return 'global\n';
        },
      }),
    });
    expect(workers.workers).toBe(3);
    queue.add('a');
    queue.add('b');
    await eventually(() => queue.len() === 0 && seenDuring !== undefined, { timeoutMs: 5000, intervalMs: 5, what: 'two cycles at once' });
    const lb = { controller: 'lb' };
    expect(sampleValue(seenDuring!, 'controller_runtime_active_workers', lb)).toBe(2);
    expect(sampleValue(seenDuring!, 'controller_runtime_max_concurrent_reconciles', lb)).toBe(3);
    await eventually(
      async () => sampleValue(await scrape(app), 'controller_runtime_reconcile_total', { ...lb, result: 'requeue_after' }) === 2,
      {
        timeoutMs: 5000,
        intervalMs: 5,
        what: 'both cycles counted as requeue_after',
      },
    );
    const e = await scrape(app);
    expect(sampleValue(e, 'controller_runtime_active_workers', lb)).toBe(0);
    expect(sampleValue(e, 'controller_runtime_reconcile_total', { ...lb, result: 'success' })).toBe(0);
    await workers.close();
    expect(sampleValue(await scrape(app), 'controller_runtime_max_concurrent_reconciles', lb)).toBe(1);
  });

  it('treats a cycle description that throws as a failure: retried and reported, nothing recorded', async () => {
    const { pipeline, queue, app } = setupQueue(false);
    const errors: string[] = [];
    let calls = 0;
    const workers = pipeline.processQueue(queue, {
      cycle: (key) => {
        calls += 1;
        if (calls === 1) throw new Error(`no object ${key} in the cache yet`);
        return { trigger: 'retry', render: () => 'global\n', nope: true } as never;
      },
      onError: (err) => {
        errors.push((err as Error).message);
        throw new Error('a broken logger changes nothing');
      },
    });
    queue.add('default/web');
    await eventually(() => errors.length >= 2, { timeoutMs: 5000, intervalMs: 5, what: 'two failures' });
    await workers.close();
    expect(errors.slice(0, 2)).toEqual([
      'no object default/web in the cache yet',
      'pipeline.run: unknown field "nope"; known fields: trigger, reason, render, validate, endpoints, deploy',
    ]);
    expect(sampleValue(await scrape(app), 'ctl_reconciliation_total')).toBe(0);
  });

  it('checks its arguments at once', () => {
    const { pipeline, queue } = setupQueue(false);
    const cycle = () => ({ trigger: 't', render: () => '' });
    expect(() => pipeline.processQueue({} as never, { cycle })).toThrow('pipeline.processQueue needs a queue from createWorkQueue()');
    expect(() => pipeline.processQueue(queue, { cycle, worker: 2 } as never)).toThrow(
      'pipeline.processQueue: unknown option "worker" (did you mean "workers"?)',
    );
    expect(() => pipeline.processQueue(queue, { cycle, workers: 0 })).toThrow(
      'pipeline.processQueue: workers must be an integer from 1 to 1,000',
    );
    expect(() => pipeline.processQueue(queue, {} as never)).toThrow('pipeline.processQueue: cycle must be a function');
    const workers = pipeline.processQueue(queue, { cycle });
    expect(() => pipeline.processQueue(queue, { cycle })).toThrow('queue "queue" is already being processed');
    void workers.close();
    expect(() => pipeline.processQueue(createWorkQueue(), { cycle, onError: 'log' as never })).toThrow('onError must be a function');
  });
});

describe('the pipeline reporting to a PipelineMetrics the host wrote, with no metrics at all', () => {
  /** Every call the pipeline, its workers and its queue make, in order. */
  function handWritten(now?: () => number) {
    const calls: string[] = [];
    const metrics: PipelineMetrics = {
      recordValidation: (ok) => void calls.push(`validation ${ok}`),
      recordDeployment: (_seconds, ok, id) => void calls.push(`deployment ${ok} ${typeof id}`),
      driver: {
        ...(now && { now }),
        recordReconciliation: (seconds, ok, id, outcome) => void calls.push(`reconciliation ${ok} ${outcome} ${typeof id} ${seconds >= 0}`),
        controllerRuntime: {
          controller: 'mine',
          workStarted: () => (calls.push('work started'), () => void calls.push('work ended')),
          addWorkers: (count) => (calls.push(`workers ${count}`), () => void calls.push('workers stopped')),
          attachQueue: (name, reading) => {
            calls.push(`queue ${name} depth ${reading.depth()}`);
            return {
              added: () => void calls.push('added'),
              waited: (seconds) => void calls.push(`waited ${seconds >= 0}`),
              worked: (seconds) => void calls.push(`worked ${seconds >= 0}`),
              retried: () => void calls.push('retried'),
              detach: () => void calls.push('detached'),
            };
          },
        },
      },
    };
    return { calls, metrics };
  }

  it('reports a cycle, and records its progress on the state', async () => {
    const state = createIntrospectionState();
    const { calls, metrics } = handWritten();
    const pipeline = createPipeline(state, { metrics });
    await pipeline.run({ trigger: 't', render: () => 'x', validate: () => true, endpoints: ['a'], deploy: () => undefined });
    await expect(pipeline.run({ trigger: 't', render: () => 'x', validate: () => false })).rejects.toThrow('rejected by the validator');
    expect(calls).toEqual([
      'work started',
      'validation true',
      'deployment true string',
      'reconciliation true success string true',
      'work ended',
      'work started',
      'validation false',
      'reconciliation false error string true',
      'work ended',
    ]);
    expect(state.progress()[0]).toMatchObject({ activity: 'reconciliation', count: 2 });
  });

  it("reports its queue and workers, timing the queue with the reporter's clock", async () => {
    const state = createIntrospectionState();
    let clock = 1000;
    const { calls, metrics } = handWritten(() => (clock += 10));
    const pipeline = createPipeline(state, { metrics });
    const queue = createWorkQueue({ metrics, baseDelayMs: 1 });
    expect(queue.name).toBe('mine');
    let failing = 1;
    const workers = pipeline.processQueue(queue, {
      requeueAfterMs: 60_000,
      cycle: (key) => ({ trigger: key, render: () => 'x', validate: () => failing-- <= 0 }),
    });
    queue.add('k');
    await eventually(() => calls.includes('reconciliation true requeue_after string true'), {
      timeoutMs: 5000,
      intervalMs: 5,
      what: 'the retry',
    });
    await workers.close();
    expect(calls.filter((c) => !c.startsWith('validation') && !c.startsWith('work '))).toEqual([
      'queue mine depth 0',
      'workers 1',
      'added',
      'waited true',
      'reconciliation false error string true',
      'retried',
      'worked true',
      'added',
      'waited true',
      'reconciliation true requeue_after string true',
      'worked true',
      'detached',
      'workers stopped',
    ]);
  });

  it('takes a reporter without a clock or controller-runtime, and refuses one without a driver', async () => {
    const calls: string[] = [];
    const metrics: PipelineMetrics = {
      recordValidation: () => undefined,
      recordDeployment: () => undefined,
      driver: { recordReconciliation: (_s, ok, _id, outcome) => void calls.push(`${ok} ${outcome}`) },
    };
    const pipeline = createPipeline(createIntrospectionState(), { metrics });
    const queue = createWorkQueue({ metrics });
    expect(queue.name).toBe('queue');
    const workers = pipeline.processQueue(queue, { cycle: (key) => ({ trigger: key, render: () => key }) });
    queue.add('k');
    await eventually(() => calls.length === 1, { timeoutMs: 5000, intervalMs: 5, what: 'the cycle' });
    await workers.close();
    expect(calls).toEqual(['true success']);
    const { driver: _driver, ...withoutDriver } = metrics;
    expect(() => createWorkQueue({ metrics: withoutDriver as never })).toThrow('createWorkQueue: option "metrics" must be');
    expect(() => createWorkQueue({ metrics: { ...metrics, driver: { ...metrics.driver, now: 5 } } as never })).toThrow(
      'createWorkQueue: option "metrics" must be',
    );
  });
});
