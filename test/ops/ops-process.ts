/**
 * The server as a real process for the operations tests (test/ops): started with the given data
 * folder, resolved once its HTTP and MQTT listening lines are out; plus the actions interface and
 * the `engine backup` / `engine check` tools as child processes.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { call } from '../helpers/server';
import { spawnEngine, type EngineProcess } from '../helpers/engine-process';

const MAIN = join(__dirname, '..', '..', 'main.js');

export const OPS_PLUGINS = ['storage-lmdb', 'data', 'messaging', 'http', 'rest', 'actions', 'mqtt'];

export interface RunningEngine {
  proc: EngineProcess;
  http: string;
  mqttUrl: string;
}

export async function startEngine(env: NodeJS.ProcessEnv, args: string[] = []): Promise<RunningEngine> {
  const proc = spawnEngine({
    ENGINE_PLUGINS: JSON.stringify(OPS_PLUGINS),
    ENGINE_LISTENING_HTTP_PORT: '0', ENGINE_LISTENING_HTTPS_PORT: 'off',
    ENGINE_MQTT_PORT: '0', ENGINE_MQTTS_PORT: 'off', ENGINE_MQTT_WS_PORT: 'off', ENGINE_MQTT_WSS_PORT: 'off',
    ...env,
  }, args);
  const lines = await new Promise<{ http: string; mqtt: string }>((resolve, reject) => {
    const check = (): void => {
      const listening = proc.logs().filter((line) => line.msg === 'listening');
      const http = listening.find((line) => typeof line.http === 'string')?.http as string | undefined;
      const mqtt = listening.find((line) => line.plugin === 'mqtt')?.mqtt as string | undefined;
      if (http && mqtt) {
        proc.child.stdout!.off('data', check);
        resolve({ http, mqtt });
      }
    };
    proc.child.stdout!.on('data', check);
    void proc.exit.then((code) => reject(new Error(`the server exited (${code}) before listening: ${proc.output()}`)));
    check();
  });
  return { proc, http: lines.http, mqttUrl: lines.mqtt };
}

/** POST /api with one envelope; the response envelope. */
export async function action(http: string, envelope: Record<string, unknown>): Promise<any> {
  const reply = await call('POST', `${http}/api`, { body: envelope, auth: null });
  assert.equal(reply.status, 200, reply.text);
  return reply.json;
}

export async function adminToken(http: string): Promise<string> {
  const login = await action(http, { api: 'admin', action: 'createSession', params: { username: 'admin', password: 'ADMIN' } });
  assert.equal(login.errorCode, 0, login.errorMessage);
  return login.authToken as string;
}

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/main.js <tool> ...args` to its end. */
export function runTool(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data: Buffer) => { stdout += data.toString(); });
    child.stderr.on('data', (data: Buffer) => { stderr += data.toString(); });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `engine check <folder>`: asserts it passes; the report. */
export async function assertIntegrity(folder: string): Promise<Record<string, unknown>> {
  const run = await runTool(['check', folder]);
  assert.equal(run.code, 0, `engine check ${folder} failed: ${run.stdout}${run.stderr}`);
  const report = JSON.parse(run.stdout) as Record<string, unknown>;
  assert.equal(report.ok, true);
  return report;
}
