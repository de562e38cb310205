/**
 * A cluster on loopback for the tests of plugins/cluster-nats (docs/cluster.md): three Debian
 * `nats-server` processes with JetStream and a cluster block each (store_dir in a temporary
 * folder), and engine processes (`node dist/main.js`, config/cluster.json) with their own data
 * folders and ports. Every process is stopped by its own id; readiness is each process's own log
 * line, never a polling loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { spawnEngine, type EngineProcess } from './engine-process';
import { freePort } from './free-port';

/** Debian's nats-server (scripts/ensure.mjs installs it): NATS_SERVER, else on PATH, else /usr/sbin, where Debian puts it. */
export const NATS_SERVER = process.env.NATS_SERVER
  ?? [...(process.env.PATH ?? '').split(delimiter).filter(Boolean).map((folder) => join(folder, 'nats-server')), '/usr/sbin/nats-server']
    .find((candidate) => existsSync(candidate))
  ?? '/usr/sbin/nats-server';
const CLUSTER_CONFIG = resolve(__dirname, '..', '..', '..', 'config', 'cluster.json');

export { freePort };

export class NatsServer {
  child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  output = '';

  constructor(readonly name: string, readonly port: number, readonly configFile: string, private readonly ownDir?: string) {}

  /**
   * One nats-server with JetStream and no cluster, in a temporary folder of its own (`extra`:
   * more lines of its configuration), started; remove() stops it and deletes the folder.
   */
  static async alone(name: string, extra: string[] = []): Promise<NatsServer> {
    const dir = mkdtempSync(join(tmpdir(), `engine-nats-${name}-`));
    mkdirSync(join(dir, 'js'));
    const port = await freePort();
    const configFile = join(dir, 'nats.conf');
    writeFileSync(configFile, [
      `server_name: ${name}`,
      `listen: 127.0.0.1:${port}`,
      ...extra,
      `jetstream { store_dir: "${join(dir, 'js')}", max_memory_store: 16MB, max_file_store: 64MB }`,
      '',
    ].join('\n'));
    const server = new NatsServer(name, port, configFile, dir);
    try {
      await server.start();
    } catch (error) {
      await server.remove();
      throw error;
    }
    return server;
  }

  /** Stops the server and deletes the folder alone() made for it. */
  async remove(): Promise<void> {
    await this.stop();
    if (this.ownDir !== undefined) rmSync(this.ownDir, { recursive: true, force: true });
  }

  get url(): string { return `nats://127.0.0.1:${this.port}`; }
  get running(): boolean { return this.child !== null && this.child.exitCode === null && this.child.signalCode === null; }

  /**
   * Starts the server; resolves once it logs that it is ready (JetStream and routes configured).
   * A restart appends to `output`: only what this process logged counts.
   */
  start(): Promise<void> {
    const child = spawn(NATS_SERVER, ['-c', this.configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.exited = new Promise((done) => child.once('exit', () => done()));
    const from = this.output.length;
    return new Promise((done, fail) => {
      const onData = (data: Buffer): void => {
        this.output += data.toString();
        if (this.output.includes('Server is ready', from)) done();
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('error', fail);
      child.once('exit', (code, signal) => fail(new Error(`nats-server ${this.name} exited (${code ?? signal}) before it was ready: ${this.output.slice(-2000)}`)));
    });
  }

  /** Sends the signal to this server's process (by its id) and resolves when it has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.running) this.child!.kill(signal);
    await this.exited;
  }
}

/** Three nats-servers with JetStream, clustered on loopback. */
export class NatsCluster {
  private constructor(readonly dir: string, readonly servers: NatsServer[]) {}

  get urls(): string[] { return this.servers.map((s) => s.url); }

  /**
   * `noAdvertise`: the servers do not tell clients the other servers' URLs, so a client reaches
   * only the URLs it was given (a node behind the test's proxies must not go round them).
   */
  static async start(size = 3, noAdvertise = false): Promise<NatsCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'engine-nats-'));
    const ports: number[] = [];
    const routes: number[] = [];
    for (let i = 0; i < size; i++) {
      ports.push(await freePort());
      routes.push(await freePort());
    }
    const servers: NatsServer[] = [];
    for (let i = 0; i < size; i++) {
      const name = `n${i + 1}`;
      const storeDir = join(dir, name);
      mkdirSync(storeDir);
      const configFile = join(dir, `${name}.conf`);
      writeFileSync(configFile, [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${ports[i]}`,
        'max_payload: 8MB',
        `jetstream { store_dir: "${storeDir}", max_memory_store: 64MB, max_file_store: 2GB }`,
        `cluster { name: engine-test, listen: 127.0.0.1:${routes[i]}, routes: [${routes.filter((_, j) => j !== i).map((p) => `nats-route://127.0.0.1:${p}`).join(', ')}]${noAdvertise ? ', no_advertise: true' : ''} }`,
        '',
      ].join('\n'));
      servers.push(new NatsServer(name, ports[i], configFile));
    }
    const cluster = new NatsCluster(dir, servers);
    try {
      // One after the other: nats-server 2.9 servers that dial each other at the same moment can
      // both drop that route, and then one may never join JetStream's meta group, so a stream of
      // three replicas cannot be placed (1 start in 30 when started together; none in 250 since).
      // A server still dials a peer that was not up when it started, once a second, so this makes
      // the race rare, not impossible.
      for (const server of servers) await server.start();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  async stop(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.stop('SIGTERM')));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface EngineNodeOptions {
  /** Settings written into the node's configuration file, over config/cluster.json. */
  settings?: Record<string, unknown>;
  /**
   * The NATS URLs a node (by index from 0) connects to, given the servers' own in that node's
   * order; undefined: those. test/cluster/10 routes one node through TCP proxies it controls.
   */
  natsUrls?: (index: number, urls: string[]) => Promise<string[] | undefined>;
  /** Options given to node before the program, by node name (the cluster bench's `--cpu-prof`). */
  nodeArgs?: (name: string) => string[];
}

/** One engine process of the cluster, with its own data folder and ports; restartable on them. */
export class EngineNode {
  process: EngineProcess | null = null;

  private constructor(
    readonly name: string,
    readonly dataDir: string,
    readonly configFile: string,
    readonly httpPort: number,
    readonly mqttPort: number,
    private readonly nodeArgs: string[] = [],
  ) {}

  get http(): string { return `http://127.0.0.1:${this.httpPort}`; }
  get mqtt(): string { return `mqtt://127.0.0.1:${this.mqttPort}`; }

  /** `first`: the nats-server this node connects to first (the one beside it), the others after it. */
  static async create(name: string, dir: string, nats: NatsCluster, first: number, options: EngineNodeOptions = {}, index = first): Promise<EngineNode> {
    const dataDir = join(dir, `${name}.data`);
    const configFile = join(dir, `${name}.json`);
    const httpPort = await freePort();
    const mqttPort = await freePort();
    const urls = [...nats.urls.slice(first), ...nats.urls.slice(0, first)];
    const natsUrls = (await options.natsUrls?.(index, urls)) ?? urls;
    // Settings load config/default.json and ONE file over it: config/cluster.json with the node's own settings.
    writeFileSync(configFile, JSON.stringify({
      ...clusterSettings(),
      data_dir: dataDir,
      listening_host: '127.0.0.1',
      listening_http_port: httpPort,
      listening_https_port: null,
      mqtt_port: mqttPort,
      mqtts_port: null,
      mqtt_ws_port: null,
      mqtt_wss_port: null,
      cluster_nats_servers: natsUrls,
      cluster_node_name: name,
      cluster_request_timeout_ms: 5000,
      ...options.settings,
    }));
    return new EngineNode(name, dataDir, configFile, httpPort, mqttPort, options.nodeArgs?.(name));
  }

  /** Starts the process; resolves once both its HTTP and MQTT listeners are open. */
  async start(): Promise<void> {
    // spawnEngine's free MQTT ports are overridden: a node keeps its ports across restarts.
    const engine = spawnEngine({
      ENGINE_CONFIG: this.configFile,
      NODE_ENV: 'test',
      ENGINE_MQTT_PORT: String(this.mqttPort),
      ENGINE_MQTTS_PORT: 'null',
      ENGINE_MQTT_WS_PORT: 'null',
      ENGINE_MQTT_WSS_PORT: 'null',
    }, [], this.nodeArgs);
    this.process = engine;
    await engine.logged((line) => line.msg === 'listening' && typeof line.http === 'string');
    await engine.logged((line) => line.msg === 'listening' && typeof line.mqtt === 'string');
  }

  /** Sends the signal to the process (by its id); resolves with its exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const engine = this.process;
    if (engine === null) return null;
    return engine.stop(signal);
  }
}

/** config/cluster.json: the plugins and cluster settings of a node. */
function clusterSettings(): Record<string, unknown> {
  return JSON.parse(readFileSync(CLUSTER_CONFIG, 'utf8')) as Record<string, unknown>;
}

/** Three nats-servers and `size` engine nodes on them. */
export class TestCluster {
  private constructor(readonly dir: string, readonly nats: NatsCluster, readonly nodes: EngineNode[]) {}

  static async start(size = 3, options: EngineNodeOptions = {}): Promise<TestCluster> {
    const nats = await NatsCluster.start(3, options.natsUrls !== undefined);
    const dir = mkdtempSync(join(tmpdir(), 'engine-cluster-'));
    const nodes: EngineNode[] = [];
    const cluster = new TestCluster(dir, nats, nodes);
    try {
      for (let i = 0; i < size; i++) {
        nodes.push(await EngineNode.create(`node${i + 1}`, dir, nats, i % nats.servers.length, options, i));
      }
      await Promise.all(nodes.map((node) => node.start()));
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /**
   * What each node logged at warn level and above, and its last lines: printed when a cluster
   * test fails, because a failure on a loaded CI machine cannot be rerun to watch it.
   */
  report(): string {
    const parts: string[] = [];
    for (const node of this.nodes) {
      const lines = node.process?.logs() ?? [];
      const notable = lines.filter((line) => typeof line.level === 'number' && line.level >= 40);
      const shown = [...new Set([...notable.slice(-20), ...lines.slice(-10)])];
      parts.push(`--- ${node.name}: ${lines.length} log lines, ${notable.length} at warn or above; these:`, ...shown.map((line) => JSON.stringify(line)));
    }
    return parts.join('\n');
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop('SIGTERM')));
    await this.nats.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * The cluster of one describe block: started before its tests, stopped after them, and its
 * report (TestCluster.report) printed when a test fails, after `extra()` when given (where the
 * test had got to). Returns the cluster's accessor.
 */
/**
 * clusterForSuite with one node (`node`, 0-based) reaching each nats-server through a proxy of the
 * test's (a TcpProxy, a DeliveryHoldProxy): the test holds or watches that node's traffic. The
 * proxies close after the suite.
 */
export function clusterWithProxiedNode<P extends { url: string; close(): Promise<void> }>(
  node: number, startProxy: (port: number) => Promise<P>, options: EngineNodeOptions = {}, extra?: () => string,
): { cluster: () => TestCluster; proxies: P[] } {
  const proxies: P[] = [];
  const cluster = clusterForSuite({
    ...options,
    natsUrls: async (index, urls) => {
      if (index !== node) return undefined;
      for (const url of urls) proxies.push(await startProxy(Number(new URL(url).port)));
      return proxies.map((proxy) => proxy.url);
    },
  }, extra);
  after(async () => { await Promise.all(proxies.map((proxy) => proxy.close())); });
  return { cluster, proxies };
}

export function clusterForSuite(options: EngineNodeOptions = {}, extra?: () => string): () => TestCluster {
  let cluster: TestCluster | undefined;
  before(async function () {
    cluster = await TestCluster.start(3, options);
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(...(extra ? [extra()] : []), cluster?.report());
  });
  after(async function () {
    await cluster?.stop();
  });
  return () => {
    if (cluster === undefined) throw new Error('the cluster has not started');
    return cluster;
  };
}
