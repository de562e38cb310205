/**
 * The real program as a child process: `node dist/main.js` with settings from the environment.
 * Readiness is the server's own `listening` log line (pino JSON on stdout), not a polling loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';

const MAIN = join(__dirname, '..', '..', 'main.js');

export interface ListeningLine {
  host: string;
  http?: string;
  https?: string;
}

export interface EngineProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** The parsed JSON log lines so far. */
  logs(): Array<Record<string, unknown>>;
  /** Resolves with the `listening` log line; rejects when the process exits first. */
  listening: Promise<ListeningLine>;
  exit: Promise<number | null>;
  /** Resolves with the first log line (so far or later) the predicate accepts; rejects when the process exits first. */
  logged(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export const FREE_MQTT_PORTS = { ENGINE_MQTT_PORT: '0', ENGINE_MQTTS_PORT: '0', ENGINE_MQTT_WS_PORT: '0', ENGINE_MQTT_WSS_PORT: '0' } as const;

/** `nodeArgs` go to node before the program (e.g. `--cpu-prof`). */
export function spawnEngine(env: NodeJS.ProcessEnv, args: string[] = [], nodeArgs: string[] = []): EngineProcess {
  let output = '';
  const lines: Array<Record<string, unknown>> = [];
  let pending = '';
  const lineWaiters: Array<{ predicate: (line: Record<string, unknown>) => boolean; resolve: (line: Record<string, unknown>) => void }> = [];
  const child = spawn(process.execPath, [...nodeArgs, MAIN, ...args], {
    // MQTT listeners on free ports unless a test says otherwise (the default plugins include mqtt).
    env: { PATH: process.env.PATH, ENGINE_LOG_LEVEL: 'info', ...FREE_MQTT_PORTS, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const listening = new Promise<ListeningLine>((resolve, reject) => {
    child.stdout!.on('data', (data: Buffer) => {
      output += data.toString();
      pending += data.toString();
      let newline: number;
      while ((newline = pending.indexOf('\n')) !== -1) {
        const text = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        let line: Record<string, unknown>;
        try { line = JSON.parse(text) as Record<string, unknown>; } catch { continue; }
        lines.push(line);
        for (let i = lineWaiters.length - 1; i >= 0; i--) {
          if (lineWaiters[i].predicate(line)) lineWaiters.splice(i, 1)[0].resolve(line);
        }
        if (line.msg === 'listening') resolve(line as unknown as ListeningLine);
      }
    });
    void exit.then((code) => reject(new Error(`the engine exited (code ${code}) before listening: ${output}`)));
  });
  listening.catch(() => undefined);
  child.stderr!.on('data', (data: Buffer) => { output += data.toString(); });
  return {
    child,
    output: () => output,
    logs: () => lines,
    listening,
    exit,
    logged(predicate) {
      const seen = lines.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        lineWaiters.push({ predicate, resolve });
        void exit.then((code) => reject(new Error(`the engine exited (code ${code}) before the awaited log line: ${output.slice(-4000)}`)));
      });
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exit;
    },
  };
}

/** true when a TCP connection to host:port is accepted, false when it is refused. */
export function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}
