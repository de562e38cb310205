/** Shared setup for the data-command tests: a real engine on LMDB in a temp dir, no HTTP. */
import assert from 'node:assert/strict';
import type { CommandContext } from '../../kernel/bus/command';
import type { ErrorId } from '../../kernel/errors';
import { isEngineError } from '../../kernel/errors';
import { startServer, type TestServer } from '../helpers/server';

export interface DataFixture {
  server: TestServer;
  admin: CommandContext;
  exec<R = any>(name: string, params: unknown, ctx?: CommandContext): Promise<R>;
  /** Runs a command that must fail with `id`; returns the error for further checks. */
  fails(name: string, params: unknown, id: ErrorId, ctx?: CommandContext): Promise<Error & { details: Record<string, unknown> }>;
}

export async function startData(): Promise<DataFixture> {
  const server = await startServer({ plugins: ['storage-lmdb', 'data'], listening_http_port: null, listening_https_port: null });
  const { engine } = server;
  const admin: CommandContext = { principal: engine.accounts.principal('admin'), origin: 'internal' };
  const exec = <R>(name: string, params: unknown, ctx: CommandContext = admin): Promise<R> => engine.bus.execute<R>(name, params, ctx);
  const fails = async (name: string, params: unknown, id: ErrorId, ctx: CommandContext = admin) => {
    try {
      await exec(name, params, ctx);
    } catch (error) {
      assert.ok(isEngineError(error), `expected an EngineError, got ${String(error)}`);
      assert.equal(error.id, id, `${name}: expected ${id}, got ${error.id}: ${error.message}`);
      return error as any;
    }
    assert.fail(`${name} should have failed with ${id}`);
  };
  return { server, admin, exec, fails };
}
