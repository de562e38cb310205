/**
 * A hashing worker thread: runs one scrypt at a time for password-hasher.ts. scrypt runs here,
 * on this thread, so it never takes a slot of libuv's thread pool from LMDB commits.
 */
import { parentPort } from 'node:worker_threads';
import { hashPasswordSync, verifyPasswordSync } from './password-hash';

export type HashTask = { op: 'hash'; password: string } | { op: 'verify'; password: string; stored: string };
export type HashReply = { ok: true; value: string | boolean } | { ok: false; message: string };

parentPort!.on('message', (task: HashTask) => {
  let reply: HashReply;
  try {
    reply = { ok: true, value: task.op === 'hash' ? hashPasswordSync(task.password) : verifyPasswordSync(task.password, task.stored) };
  } catch (error) {
    reply = { ok: false, message: (error as Error).message };
  }
  parentPort!.postMessage(reply);
});
