/**
 * A TCP proxy between an engine node and one nats-server that can hold what the SERVER sends the
 * node from the stream (the JetStream messages its stream reader is delivered, those whose reply
 * subject acknowledges to `$JS.ACK.<stream>.`), while everything else goes through both ways:
 * the node's writes, its requests and their answers. So a test keeps a node behind the stream
 * for as long as it needs, and the node can still ask the stream for its tail (`sent()` tells
 * when it did).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

interface Link {
  client: Socket;
  upstream: Socket;
  /** Deliveries held, in order. */
  held: Buffer[];
  /** The start of a server operation not yet whole. */
  partial: Buffer;
}

export class DeliveryHoldProxy {
  private readonly links = new Set<Link>();
  private holding = false;
  /** What the node sent since the last mark (latin1): looked through by sent() (nothing is kept before the first mark). */
  private sentText = '';
  private recording = false;
  private readonly waiters: Array<{ text: string; resolve: () => void }> = [];

  private constructor(private readonly server: Server, readonly port: number, private readonly ackPrefix: string) {}

  get url(): string { return `nats://127.0.0.1:${this.port}`; }

  static async start(targetPort: number, stream = 'ENGINE'): Promise<DeliveryHoldProxy> {
    let proxy: DeliveryHoldProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, targetPort));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new DeliveryHoldProxy(server, (server.address() as { port: number }).port, `$JS.ACK.${stream}.`);
    return proxy;
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    const link: Link = { client, upstream, held: [], partial: Buffer.alloc(0) };
    this.links.add(link);
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.once('close', () => {
        this.links.delete(link);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (this.recording) {
        this.sentText += chunk.toString('latin1');
        this.tellWaiters();
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => this.fromServer(link, chunk));
  }

  /** From now on the stream's deliveries to the node are kept here until releaseDeliveries(). */
  holdDeliveries(): void {
    this.holding = true;
  }

  /** What was held goes to the node, in order, and from now on everything goes at once. */
  releaseDeliveries(): void {
    this.holding = false;
    for (const link of this.links) {
      for (const chunk of link.held) link.client.write(chunk);
      link.held = [];
    }
  }

  /** Forgets what the node sent so far: sent() looks at what it sends from now on. */
  mark(): void {
    this.recording = true;
    this.sentText = '';
  }

  /** How many times the node has sent `text` (ASCII) since the last mark. */
  count(text: string): number {
    let count = 0;
    for (let at = this.sentText.indexOf(text); at !== -1; at = this.sentText.indexOf(text, at + text.length)) count++;
    return count;
  }

  /** Resolves once the node has sent `text` (ASCII) since the last mark. */
  sent(text: string): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ text, resolve });
      this.tellWaiters();
    });
  }

  private tellWaiters(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (!this.sentText.includes(this.waiters[i].text)) continue;
      this.waiters.splice(i, 1)[0].resolve();
    }
  }

  /** Each whole server operation goes to the node, or is held when it is a stream delivery (while holding, and after one held). */
  private fromServer(link: Link, chunk: Buffer): void {
    let bytes = link.partial.length === 0 ? chunk : Buffer.concat([link.partial, chunk]);
    for (let op = nextOperation(bytes); op !== null; op = nextOperation(bytes)) {
      const unit = Buffer.from(bytes.subarray(0, op.length));
      // Held deliveries keep their order: a delivery after a held one waits behind it.
      if (op.replyTo?.startsWith(this.ackPrefix) && (this.holding || link.held.length > 0)) link.held.push(unit);
      else link.client.write(unit);
      bytes = bytes.subarray(op.length);
    }
    link.partial = Buffer.from(bytes);
  }

  close(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.upstream.destroy();
    }
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * The first whole NATS server operation in `bytes` (null: not whole yet): its length, and the
 * reply subject of a MSG / HMSG (`MSG <subject> <sid> [reply] <size>`, `HMSG <subject> <sid> [reply] <header size> <total size>`).
 */
function nextOperation(bytes: Buffer): { length: number; replyTo?: string } | null {
  const eol = bytes.indexOf('\r\n');
  if (eol === -1) return null;
  const words = bytes.toString('latin1', 0, eol).split(' ');
  const verb = words[0].toUpperCase();
  if (verb !== 'MSG' && verb !== 'HMSG') return { length: eol + 2 };
  const length = eol + 2 + Number(words[words.length - 1]) + 2;
  if (bytes.length < length) return null;
  const withReply = verb === 'MSG' ? words.length === 5 : words.length === 6;
  return { length, replyTo: withReply ? words[3] : undefined };
}
