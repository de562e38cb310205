/**
 * How every node applies claims and releases of client ids (plugins/cluster-nats/session-claims.ts,
 * docs/cluster.md "Sessions"), record by record as the stream hands them over: a release lets go
 * of the claim it names only, so a release on its way never takes away a later claim. The
 * interleavings through real nodes are in test/cluster/14; this covers every order of the entries.
 */
import assert from 'node:assert/strict';
import type { OperationEntry } from '../../kernel/storage/operation-entries';
import type { LogStatePort } from '../../kernel/storage/message-log-port';
import type { SessionOwnershipListener } from '../../kernel/messaging/session-ownership';
import { SessionClaims } from '../../plugins/cluster-nats/session-claims';

/** A state with no owners yet; the claims never write here in these cases (nothing is released through it). */
const emptyState: LogStatePort = {
  get: () => undefined,
  entries: () => [],
  put: () => Promise.reject(new Error('not written in this test')),
  remove: () => Promise.reject(new Error('not written in this test')),
};

const claim = (clientId: string, node: string, id: string): OperationEntry => ({ op: 'state.put', key: `owner/${clientId}`, value: { node, claim: id } });
/** What a passed-over entry becomes (session-claims.ts PASSED_OVER): the removal of a key nobody writes. */
const PASSED_OVER = { op: 'state.remove', key: 'cluster/passed-over' };
const release = (clientId: string, node: string, id: string): OperationEntry => ({ op: 'state.put', key: `owner/${clientId}`, value: { node, release: id } });

/** One record of `writer` applied: what it becomes, after which the claims it made are told. */
function apply(claims: SessionClaims, writer: string, entry: OperationEntry): OperationEntry {
  const [applied] = claims.review(writer, [entry]);
  claims.reviewed()?.();
  return applied;
}

describe('cluster: a release lets go of the claim it names only', function () {
  let claims: SessionClaims;
  const told: string[] = [];
  beforeEach(function () {
    told.length = 0;
    claims = new SessionClaims('node1', emptyState);
    const listener: Partial<SessionOwnershipListener> = {
      gained: (id) => told.push(`gained ${id}`),
      lost: (id) => told.push(`lost ${id}`),
    };
    claims.listen(listener as SessionOwnershipListener);
  });

  it('the release of the claim that holds is applied as the removal of owner/<clientId>', function () {
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.1'));
    assert.deepEqual(apply(claims, 'node1', release('c', 'node1', 'node1.a.1')), { op: 'state.remove', key: 'owner/c' });
    assert.equal(claims.ownerOf('c'), undefined);
  });

  it('a release applied after a later claim of the same node is passed over: the node still owns the client id', function () {
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.1'));
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.2'));
    assert.deepEqual(apply(claims, 'node1', release('c', 'node1', 'node1.a.1')), PASSED_OVER);
    assert.equal(claims.ownerOf('c'), 'node1');
  });

  it('a release applied before the later claim of the same node: the client id is free, then the claim gives it back (gained)', function () {
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.1'));
    apply(claims, 'node1', release('c', 'node1', 'node1.a.1'));
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.2'));
    assert.equal(claims.ownerOf('c'), 'node1');
    assert.deepEqual(told, ['gained c', 'gained c']);
  });

  it("a release applied after another node's claim is passed over (the other node keeps it)", function () {
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.1'));
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.deepEqual(apply(claims, 'node1', release('c', 'node1', 'node1.a.1')), PASSED_OVER);
    assert.equal(claims.ownerOf('c'), 'node2');
  });

  it("a release written by another node than the one it names is passed over", function () {
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.1'));
    assert.deepEqual(apply(claims, 'node2', release('c', 'node1', 'node1.a.1')), PASSED_OVER);
    assert.equal(claims.ownerOf('c'), 'node1');
  });
});

describe("cluster: a taken-over connection's will is held in the claim until the former owner's word", function () {
  let claims: SessionClaims;
  const told: string[] = [];
  const letGo = (clientId: string, node: string): OperationEntry => ({ op: 'state.put', key: `let-go/${clientId}`, value: { node } });
  const will = (node: string, topic = 'gone'): OperationEntry => ({ op: 'state.put', key: 'will/c', value: { account: 'admin', roles: [], will: { topic, payload: Buffer.from(topic), qos: 1, retain: false, properties: null, delay: 0 }, node } });
  const decide = (node: string, decided: string[], lapsed?: string): OperationEntry => ({ op: 'state.put', key: 'owner/c', value: { node, decide: decided, ...(lapsed ? { lapsed } : {}) } });
  /** The held wills of c as [claim, from, awaiting], and the node awaited. */
  const held = (c = claims): { wills: string[]; awaits?: string } | undefined => {
    const h = c.heldWills('c');
    return h && { wills: h.wills.map((w) => `${w.claim} from ${w.from}${w.awaiting ? ' awaiting' : ''}`), ...(h.awaits ? { awaits: h.awaits } : {}) };
  };
  const listen = (c: SessionClaims): void => {
    const listener: Partial<SessionOwnershipListener> = {
      gained: () => undefined,
      lost: () => undefined,
      passedOver: () => undefined,
      heldWillsChanged: (id, lapsed) => told.push(`held ${id}${lapsed ? ` (${lapsed} lapsed)` : ''}`),
    };
    c.listen(listener as SessionOwnershipListener);
  };
  beforeEach(function () {
    told.length = 0;
    claims = new SessionClaims('node3', emptyState);
    listen(claims);
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.1'));
    apply(claims, 'node1', will('node1'));
  });

  it("a CONNECT's claim from a live owner holds that connection's will in the claim (rewritten in place); the word makes it due", function () {
    const applied = apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.equal(applied.op, 'state.put');
    assert.deepEqual((applied as { value: { held: unknown[]; awaits: string } }).value.awaits, 'node1');
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1 awaiting'], awaits: 'node1' });
    const word = apply(claims, 'node1', letGo('c', 'node1'));
    assert.equal((word as { key: string }).key, 'owner/c', 'the word is stored as the claim with the will due');
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1'] });
    assert.deepEqual(told, ['held c']);
  });

  it("the former owner's removal of the will between the claim and its word: the held will goes (it decided it)", function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.equal((apply(claims, 'node1', { op: 'state.remove', key: 'will/c' }) as { key: string }).key, 'owner/c');
    assert.deepEqual(held(), { wills: [], awaits: 'node1' });
    apply(claims, 'node1', letGo('c', 'node1'));
    assert.equal(held(), undefined, 'nothing held, nothing awaited: the claim is a plain claim again');
  });

  it("the former owner's session stored with its will (a delivery's write) is passed over and keeps the held will; stored without one clears it", function () {
    apply(claims, 'node1', { op: 'state.remove', key: 'will/c' });
    apply(claims, 'node1', { op: 'state.put', key: 'session/c', value: { owner: 'admin', roles: [], will: { topic: 'w', payload: Buffer.from('w'), qos: 0, retain: false, delay: 0, dueAt: null } } });
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1 awaiting'], awaits: 'node1' });
    assert.equal(claims.heldWills('c')!.wills[0].kind, 'session');
    assert.deepEqual(apply(claims, 'node1', { op: 'state.put', key: 'session/c', value: { will: { topic: 'w' } } }), PASSED_OVER);
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1 awaiting'], awaits: 'node1' });
    apply(claims, 'node1', { op: 'state.put', key: 'session/c', value: { will: null } });
    assert.deepEqual(held(), { wills: [], awaits: 'node1' });
  });

  it('a word from another node than the former owner counts for nothing', function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.deepEqual(apply(claims, 'node2', letGo('c', 'node2')), PASSED_OVER);
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1 awaiting'], awaits: 'node1' });
    assert.deepEqual(told, []);
  });

  it('a second takeover before the first word: both connections\' wills are held, each decided by its own node\'s word', function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    apply(claims, 'node2', will('node2', 'gone2'));
    apply(claims, 'node3', claim('c', 'node3', 'node3.c.1'));
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1 awaiting', 'node3.c.1 from node2 awaiting'], awaits: 'node2' });
    apply(claims, 'node1', letGo('c', 'node1'));
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1', 'node3.c.1 from node2 awaiting'], awaits: 'node2' }, "node1's is due; node3 still waits for node2's word");
    apply(claims, 'node2', { op: 'state.remove', key: 'will/c' });
    apply(claims, 'node2', letGo('c', 'node2'));
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1'] }, "node2's connection decided its own will (a DISCONNECT)");
  });

  it('the owner\'s decision takes its wills out; a decision of a node neither owner nor awaited is passed over; a release waits while wills are held', function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    apply(claims, 'node1', letGo('c', 'node1'));
    assert.deepEqual(apply(claims, 'node1', decide('node1', ['node2.b.1'])), PASSED_OVER);
    assert.deepEqual(apply(claims, 'node2', release('c', 'node2', 'node2.b.1')), PASSED_OVER, 'the claim stays with its held will');
    assert.equal(claims.ownerOf('c'), 'node2');
    apply(claims, 'node2', decide('node2', ['node2.b.1']));
    assert.equal(held(), undefined);
    assert.deepEqual(apply(claims, 'node2', release('c', 'node2', 'node2.b.1')), { op: 'state.remove', key: 'owner/c' });
  });

  it("a former owner that was sending held wills when the claim came decides them before its word", function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    apply(claims, 'node1', letGo('c', 'node1'));
    apply(claims, 'node3', claim('c', 'node3', 'node3.c.1'));
    assert.deepEqual(held(), { wills: ['node2.b.1 from node1'], awaits: 'node2' });
    apply(claims, 'node2', decide('node2', ['node2.b.1']));
    assert.deepEqual(held(), { wills: [], awaits: 'node2' });
  });

  it("an adoption (with an expectation) awaits nothing; a lapsed lease tells the owner, whose decision ends the wait", function () {
    apply(claims, 'node2', { op: 'state.put', key: 'owner/c', value: { node: 'node2', claim: 'node2.b.1', expect: 'node1' } });
    assert.equal(held(), undefined);
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.2'));
    assert.deepEqual(held(), { wills: [], awaits: 'node2' });
    claims.nodeGone('node2');
    assert.deepEqual(told, ['held c (node2 lapsed)']);
    apply(claims, 'node1', decide('node1', [], 'node2'));
    assert.equal(held(), undefined);
  });

  it('a former owner gives its word again (the sweep) until the word is applied, and not after', function () {
    const written: string[] = [];
    const recording: LogStatePort = { ...emptyState, put: (key) => { written.push(key); return Promise.resolve(); } };
    const former = new SessionClaims('node1', recording);
    listen(former);
    apply(former, 'node1', claim('c', 'node1', 'node1.a.1'));
    apply(former, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.deepEqual(written, ['let-go/c'], 'the word, as the claim is applied');
    former.giveOwedWords();
    assert.deepEqual(written, ['let-go/c', 'let-go/c'], 'not applied yet: given again');
    apply(former, 'node1', letGo('c', 'node1'));
    former.giveOwedWords();
    assert.deepEqual(written, ['let-go/c', 'let-go/c'], 'applied: owed no more');
  });

  it('a node that starts reads the held wills back from the state, and the word applies to them as before', function () {
    const applied = apply(claims, 'node2', claim('c', 'node2', 'node2.b.1')) as { key: string; value: unknown };
    const state: LogStatePort = {
      get: (key) => (key === applied.key ? applied.value : undefined),
      entries: (prefix) => (applied.key.startsWith(prefix) ? [[applied.key, applied.value]] : []),
      put: () => Promise.reject(new Error('not written in this test')),
      remove: () => Promise.reject(new Error('not written in this test')),
    };
    const restarted = new SessionClaims('node2', state);
    listen(restarted);
    assert.deepEqual(held(restarted), { wills: ['node2.b.1 from node1 awaiting'], awaits: 'node1' });
    apply(restarted, 'node1', letGo('c', 'node1'));
    assert.deepEqual(held(restarted), { wills: ['node2.b.1 from node1'] });
    assert.deepEqual(restarted.withHeldWills(), ['c']);
  });
});
