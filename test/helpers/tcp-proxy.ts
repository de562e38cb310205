/**
 * A TCP proxy a test controls, put between an engine node and one nats-server (test/cluster/10):
 * `cut()` destroys every connection through it and refuses new ones until `restore()`, as a
 * network that drops a node would.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private refusing = false;

  private constructor(private readonly server: Server, readonly port: number) {}

  get url(): string { return `nats://127.0.0.1:${this.port}`; }

  /** Listens on a free loopback port and forwards every connection to `target` (host:port). */
  static async start(targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new TcpProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  private accept(client: Socket, targetPort: number): void {
    if (this.refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Every connection through the proxy is destroyed, and new ones are refused until restore(). */
  cut(): void {
    this.refusing = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.refusing = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
