/**
 * Which runtime this run proves: CI runs the suite on several Node lines and both Express majors,
 * and states what it expects through the environment, so a run on the wrong runtime fails here
 * instead of passing for the wrong reason.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import { createPprofRouter } from '../../lib/pprof';

const REPO = path.resolve(__dirname, '..', '..');

function installedExpressVersion(): string {
  // The module jest resolved `express` to (the alias express4 under EXPRESS_MAJOR=4).
  const entry = require.resolve('express');
  return (JSON.parse(readFileSync(path.join(path.dirname(entry), 'package.json'), 'utf8')) as { version: string }).version;
}

describe('runtime under test', () => {
  it('uses the Express major the run asks for', () => {
    const major = process.env.EXPRESS_MAJOR ?? '5';
    expect(installedExpressVersion().split('.')[0]).toBe(major);
    expect(typeof express.Router).toBe('function');
  });

  const expectedNode = process.env.EXPECT_NODE_MAJOR;
  (expectedNode ? it : it.skip)('runs on the Node major CI asked for', () => {
    expect(process.versions.node.split('.')[0]).toBe(expectedNode);
  });

  const expectedClientNode = process.env.EXPECT_CLIENT_NODE_MAJOR;
  (expectedClientNode ? it : it.skip)('runs the Kubernetes tests with the client-node major CI asked for', () => {
    // The example resolves @kubernetes/client-node from the repository, as this does.
    const version = (
      JSON.parse(readFileSync(path.join(REPO, 'node_modules', '@kubernetes', 'client-node', 'package.json'), 'utf8')) as { version: string }
    ).version;
    expect(version.split('.')[0]).toBe(expectedClientNode);
  });

  const expectedBackend = process.env.EXPECT_PROFILER_BACKEND;
  (expectedBackend ? it : it.skip)('profiles with the backend this Node line is meant to get', async () => {
    const router = createPprofRouter(undefined, {});
    try {
      expect({ backend: router.backend, reason: router.backendReason }).toEqual({ backend: expectedBackend, reason: expect.any(String) });
    } finally {
      await router.close();
    }
  });
});
