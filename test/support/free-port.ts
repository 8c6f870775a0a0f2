import { type AddressInfo, createServer } from 'node:net';

/**
 * A loopback port nobody listens on right now, for a child's or a part's listener that only takes
 * `host:port` (there is a small race until it binds; tests and benches retry where it matters).
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
