#!/usr/bin/env -S node --max-semi-space-size=8
/** `npm start`: settings from config/default.json, --config / ENGINE_CONFIG and ENGINE_* variables. */
import pino, { type Logger } from 'pino';
import { Engine } from './kernel/engine';
import { loadSettings, SettingsError } from './kernel/settings';
import { PluginError } from './kernel/load-plugins';
import { backupCommand } from './cli/backup';
import { checkCommand } from './cli/check';

/** `engine backup <folder>` and `engine check <folder>` (docs/operations.md); anything else starts the server. */
const TOOLS: Record<string, (args: readonly string[], env: NodeJS.ProcessEnv) => Promise<number>> = {
  backup: backupCommand,
  check: checkCommand,
};

async function runTool(name: string, args: readonly string[]): Promise<void> {
  try {
    process.exitCode = await TOOLS[name](args, process.env);
  } catch (error) {
    process.stderr.write(`engine ${name}: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}

async function main(): Promise<void> {
  // Signals are handled from the first moment: one arriving while plugins start (the listeners
  // may already answer) stops the server cleanly once it has started, instead of killing it.
  let engine: Engine | undefined;
  let stopSignal: string | undefined;
  const stop = (signal: string): void => {
    if (stopSignal) return;
    stopSignal = signal;
    if (engine) close(engine, signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    const settings = loadSettings({ argv: process.argv.slice(2), env: process.env });
    engine = await Engine.start({ settings, logger: terminalLogger(settings.log_level) });
  } catch (error) {
    if (error instanceof SettingsError || error instanceof PluginError) {
      process.stderr.write(`engine: cannot start: ${error.message}\n`);
    } else {
      process.stderr.write(`engine: cannot start: ${(error as Error).stack ?? String(error)}\n`);
    }
    process.exit(1);
  }
  if (stopSignal) close(engine, stopSignal);
}

/**
 * On a terminal the log is human-readable (pino-pretty, in pino's worker thread); otherwise the
 * engine's own JSON lines (undefined here).
 */
function terminalLogger(level: string): Logger | undefined {
  if (!process.stdout.isTTY) return undefined;
  return pino({ name: 'engine', level, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } });
}

/**
 * Drains and stops (kernel Engine.close: listeners close, in-flight work is answered and
 * committed, MQTT clients are disconnected), within `shutdown_timeout_seconds`: past it the
 * process exits with code 1 whatever is left, so an orchestrator's stop is never stuck.
 */
function close(engine: Engine, signal: string): void {
  engine.log.info({ signal }, 'stopping');
  const timeoutSeconds = engine.settings.shutdown_timeout_seconds;
  setTimeout(() => {
    engine.log.error({ timeoutSeconds }, 'shutdown did not finish in time: exiting');
    process.exit(1);
  }, timeoutSeconds * 1000).unref();
  engine.close().then(() => {
    engine.log.info('stopped');
    process.exit(0);
  }, (error: unknown) => {
    engine.log.error({ err: error }, 'error while stopping');
    process.exit(1);
  });
}

const tool = process.argv[2];
if (tool !== undefined && Object.hasOwn(TOOLS, tool)) void runTool(tool, process.argv.slice(3));
else void main();
