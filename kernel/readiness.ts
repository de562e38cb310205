/**
 * Whether this server should be sent work (`GET /health/ready`, docs/operations.md "Health
 * checks and shutdown"): it has started (storage open, every plugin registered, every listener
 * opened by the start hooks), it is not stopping, and every check a plugin added holds (its
 * listeners still listen, its store is open; a cluster member: it has caught up).
 */
export type ReadinessCheck = () => boolean;

export class Readiness {
  private readonly checks = new Map<string, ReadinessCheck>();
  private phase: 'starting' | 'started' | 'stopping' = 'starting';

  /** Adds a condition readiness needs; `name` says which one failed in the debug log. */
  add(name: string, check: ReadinessCheck): void {
    if (this.checks.has(name)) throw new Error(`readiness check "${name}" is added twice`);
    this.checks.set(name, check);
  }

  /** The name of the first condition that does not hold, or undefined when ready. */
  notReadyBecause(): string | undefined {
    if (this.phase === 'starting') return 'starting';
    if (this.phase === 'stopping') return 'stopping';
    for (const [name, check] of this.checks) {
      let holds: boolean;
      try {
        holds = check();
      } catch {
        holds = false;
      }
      if (!holds) return name;
    }
    return undefined;
  }

  get ready(): boolean {
    return this.notReadyBecause() === undefined;
  }

  /** @internal the engine's: every start hook ran. */
  started(): void {
    if (this.phase === 'starting') this.phase = 'started';
  }

  /** @internal the engine's: shutdown began. */
  stopping(): void {
    this.phase = 'stopping';
  }

  get isStopping(): boolean {
    return this.phase === 'stopping';
  }
}
