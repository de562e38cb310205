/**
 * Salted scrypt password hashes: `scrypt$N$r$p$salt$hash` (base64). Synchronous on purpose: they
 * run only inside the hashing workers (password-hasher.ts), never on the main thread or in
 * libuv's thread pool, which LMDB commits need.
 */
import { randomBytes, scryptSync, timingSafeEqual } from 'node:crypto';

const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
/** scrypt needs 128·N·r bytes; allow the parameters we write (and some headroom for stronger ones). */
const MAX_MEMORY = 256 * 1024 * 1024;

export function hashPasswordSync(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, KEY_LENGTH, { N, r: R, p: P, maxmem: MAX_MEMORY });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export function verifyPasswordSync(password: string, stored: string): boolean {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, saltText, keyText] = parts;
  const expected = Buffer.from(keyText, 'base64');
  const key = scryptSync(password, Buffer.from(saltText, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p), maxmem: MAX_MEMORY });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A well-formed hash of a password nobody knows, with the parameters of real ones: checking an
 * unknown account's password against it costs what a wrong password costs (no enumeration by timing).
 */
export const UNKNOWN_ACCOUNT_HASH = 'scrypt$16384$8$1$0K9wrNnMNz2x5r6IMM5q7g==$7jB3u1uMUT/hZrliUm7htnyd9X9jK5FlwiPuhVDDGNw=';
