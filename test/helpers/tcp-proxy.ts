/**
 * A TCP proxy a test controls, put between an engine node and one nats-server (test/cluster/10,
 * 14): `cut()` destroys every connection through it and refuses new ones until `restore()`, as a
 * network that drops a node would; `hold()` keeps what the node sends (its stream writes among
 * it) until `release()`, while the server's side still reaches the node, so a test can line up a
 * write that is on its way with what the node does meanwhile (`sent()` tells when it is held);
 * `holdSubject()` keeps only the NATS messages the node publishes on some subjects (its lease
 * renewals, say) and lets the rest through.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

/** One connection through the proxy: the node's socket, the server's, and what the node sent while held. */
interface Link {
  client: Socket;
  upstream: Socket;
  held: Buffer[];
  /** holdSubject(): the start of a protocol operation not yet whole. */
  partial: Buffer;
}

export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private readonly links = new Set<Link>();
  private refusing = false;
  private holding = false;
  /** holdSubject(): messages published on subjects starting with this are held. */
  private heldSubject: string | null = null;
  /** What the node sent since hold() (latin1, so any byte keeps its place): looked through by sent(). */
  private heldText = '';
  private readonly waiters: Array<{ text: string; times: number; resolve: () => void }> = [];

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
    const link: Link = { client, upstream, held: [], partial: Buffer.alloc(0) };
    this.links.add(link);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('close', () => {
        this.sockets.delete(socket);
        this.links.delete(link);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (this.holding) this.keep(link, chunk);
      else if (this.heldSubject !== null) this.sortOut(link, chunk);
      else upstream.write(chunk);
    });
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

  /** From now on, what the node sends is kept here (the server's side still reaches the node) until release(). */
  hold(): void {
    this.holding = true;
    this.heldText = '';
  }

  /**
   * From now on, the messages the node publishes on subjects starting with `prefix` are kept here
   * until release(); everything else goes through. Set it before the node connects: the node's
   * bytes are read as NATS protocol operations from the start of its connection.
   */
  holdSubject(prefix: string): void {
    this.heldSubject = prefix;
    this.heldText = '';
  }

  /** What the node sent while held goes to the server, in order, and from now on everything goes at once. */
  release(): void {
    this.holding = false;
    this.heldSubject = null;
    for (const link of this.links) {
      for (const chunk of [...link.held, link.partial]) link.upstream.write(chunk);
      link.held = [];
      link.partial = Buffer.alloc(0);
    }
  }

  private keep(link: Link, bytes: Buffer): void {
    link.held.push(bytes);
    this.heldText += bytes.toString('latin1');
    this.tellWaiters();
  }

  /** holdSubject(): each whole operation goes through, or is kept when it publishes on the held subjects. */
  private sortOut(link: Link, chunk: Buffer): void {
    let bytes = link.partial.length === 0 ? chunk : Buffer.concat([link.partial, chunk]);
    for (let op = nextOperation(bytes); op !== null; op = nextOperation(bytes)) {
      const unit = bytes.subarray(0, op.length);
      if (op.subject !== undefined && op.subject.startsWith(this.heldSubject!)) this.keep(link, Buffer.from(unit));
      else link.upstream.write(Buffer.from(unit));
      bytes = bytes.subarray(op.length);
    }
    link.partial = Buffer.from(bytes);
  }

  /** Resolves once what the node sent since hold() holds `text` (ASCII) `times` times. */
  sent(text: string, times = 1): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ text, times, resolve });
      this.tellWaiters();
    });
  }

  private tellWaiters(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i];
      if (occurrences(this.heldText, waiter.text) < waiter.times) continue;
      this.waiters.splice(i, 1);
      waiter.resolve();
    }
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The first whole NATS client operation in `bytes` (null: not whole yet): its length, and the
 * subject of a PUB / HPUB (`PUB <subject> [reply] <size>`, `HPUB <subject> [reply] <header size> <total size>`).
 */
function nextOperation(bytes: Buffer): { length: number; subject?: string } | null {
  const eol = bytes.indexOf('\r\n');
  if (eol === -1) return null;
  const words = bytes.toString('latin1', 0, eol).split(' ');
  const verb = words[0].toUpperCase();
  if (verb !== 'PUB' && verb !== 'HPUB') return { length: eol + 2 };
  const length = eol + 2 + Number(words[words.length - 1]) + 2;
  return bytes.length < length ? null : { length, subject: words[1] };
}

function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count++;
  return count;
}
