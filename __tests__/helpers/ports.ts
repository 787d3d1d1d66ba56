import { freePorts } from '../../scripts/control-plane';

/**
 * Asks the kernel for `count` distinct free loopback ports, every listener open until all are known
 * (scripts/control-plane.js, shared with the benchmarks).
 */
export { freePorts };

/** Asks the kernel for a free loopback port. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** Closes a test server at once: open keep-alive connections are cut rather than waited for. */
export async function closeServer(server: { closeAllConnections(): void; close(cb: () => void): unknown }): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
