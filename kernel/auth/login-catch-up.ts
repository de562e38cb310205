/**
 * A login refused on a node of a cluster may only mean that this node has not applied yet the
 * account another node created (or re-passworded) a moment ago (docs/cluster.md, "Logging in
 * right after an account is written elsewhere"): the login guard then catches up with the
 * replicated log and decides again.
 *
 * The catch-ups are shared, so a flood of bad logins is not a flood of stream requests. A login
 * needs a catch-up that STARTED after the login came in (one that read the log's tail before
 * then may have missed the write the login relies on; a later one has it, since that write was
 * acknowledged before the client sent the login). So a login takes a ticket when it comes in
 * (ticket()) and, refused, waits for a catch-up started after it: the latest one if it did (done
 * or under way), else the one queued to start when the one under way ends, shared by every login
 * that needs it. At most one catch-up runs and one waits; a login waits at most `boundMs`.
 */
import type { ReplicaCatchUp } from '../bus/command-bus';

interface Started {
  /** Its number: catch-ups are numbered from 1 in the order they start. */
  number: number;
  outcome: Promise<boolean>;
}

export class LoginCatchUp {
  /** Catch-ups started so far (the number of the latest). */
  private count = 0;
  private latest: Started | null = null;
  private running = false;
  /** The catch-up that starts when the one under way ends. */
  private queued: Promise<boolean> | null = null;

  /** `replica`: the installed catch-up, read when needed (a cluster plugin installs it after the kernel is made). */
  constructor(private readonly replica: () => ReplicaCatchUp | null, private readonly boundMs: number) {}

  /** Taken when a login comes in: catchUp(ticket) waits only for a catch-up started after it. */
  ticket(): number {
    return this.count;
  }

  /**
   * Resolves true once this node has applied the log up to a tail read after the ticket was
   * taken; false when there is no log to catch up with, the catch-up failed, or it took longer
   * than the bound (the refusal then stands).
   */
  catchUp(ticket: number): Promise<boolean> {
    const replica = this.replica();
    if (replica === null) return Promise.resolve(false);
    const latest = this.latest;
    let outcome: Promise<boolean>;
    if (latest !== null && latest.number > ticket) outcome = latest.outcome;
    else if (this.queued !== null) outcome = this.queued;
    else if (!this.running) outcome = this.start(replica);
    else outcome = this.queued = latest!.outcome.then(() => this.start(replica));
    return bounded(outcome, this.boundMs);
  }

  private start(replica: ReplicaCatchUp): Promise<boolean> {
    this.queued = null;
    this.running = true;
    const outcome = replica.catchUp().catch(() => false);
    const started: Started = { number: ++this.count, outcome };
    this.latest = started;
    void outcome.then(() => { if (this.latest === started) this.running = false; });
    return outcome;
  }
}

function bounded(outcome: Promise<boolean>, ms: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void outcome.then((value) => { clearTimeout(timer); resolve(value); });
  });
}
