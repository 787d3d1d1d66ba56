import net from 'node:net';

/**
 * Asks the kernel for `count` distinct free loopback ports. Every listener stays open until all
 * ports are known: asked one after another, each closed before the next, the kernel may hand out
 * the same port twice (an example app then got one port for its debug and its metrics endpoint).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = net.createServer();
      server.unref();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      ports.push((server.address() as net.AddressInfo).port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

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
