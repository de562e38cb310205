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
      formerOwnerLetGo: (id, cleared) => told.push(`let go ${id}${cleared ? ', will cleared' : ''}`),
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

describe("cluster: a taken-over connection's will waits for the former owner's word", function () {
  let claims: SessionClaims;
  const told: string[] = [];
  const letGo = (clientId: string, node: string): OperationEntry => ({ op: 'state.put', key: `let-go/${clientId}`, value: { node } });
  beforeEach(function () {
    told.length = 0;
    claims = new SessionClaims('node3', emptyState);
    const listener: Partial<SessionOwnershipListener> = {
      gained: () => undefined,
      lost: () => undefined,
      passedOver: () => undefined,
      formerOwnerLetGo: (id, cleared) => told.push(`let go ${id}${cleared ? ', will cleared' : ''}`),
    };
    claims.listen(listener as SessionOwnershipListener);
    apply(claims, 'node1', claim('c', 'node1', 'node1.a.1'));
  });

  it("a CONNECT's claim from a live owner awaits its word; the word tells that the will was not cleared", function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.equal(claims.awaitsWord('c'), true);
    assert.deepEqual(apply(claims, 'node1', letGo('c', 'node1')), PASSED_OVER, 'the word is never stored');
    assert.deepEqual(told, ['let go c']);
    assert.equal(claims.awaitsWord('c'), false);
  });

  it("the former owner's removal of the will between the claim and its word: the will was cleared there", function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    assert.deepEqual(apply(claims, 'node1', { op: 'state.remove', key: 'will/c' }), PASSED_OVER);
    apply(claims, 'node1', letGo('c', 'node1'));
    assert.deepEqual(told, ['let go c, will cleared']);
  });

  it("the former owner's session stored without a will clears it; stored with its will (a delivery's write) does not", function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    apply(claims, 'node1', { op: 'state.put', key: 'session/c', value: { will: { topic: 'w' } } });
    apply(claims, 'node1', letGo('c', 'node1'));
    apply(claims, 'node2', claim('c', 'node3', 'node3.c.1'));
    apply(claims, 'node3', claim('c', 'node1', 'node1.a.2'));
    apply(claims, 'node3', { op: 'state.put', key: 'session/c', value: { will: null } });
    apply(claims, 'node3', letGo('c', 'node3'));
    assert.deepEqual(told, ['let go c', 'let go c, will cleared']);
  });

  it('a word from another node than the former owner counts for nothing', function () {
    apply(claims, 'node2', claim('c', 'node2', 'node2.b.1'));
    apply(claims, 'node2', letGo('c', 'node2'));
    assert.deepEqual(told, []);
    assert.equal(claims.awaitsWord('c'), true);
  });

  it('a claim that adopts a dead owner\'s session (with an expectation) awaits nothing; a lapsed lease ends the wait', function () {
    apply(claims, 'node2', { op: 'state.put', key: 'owner/c', value: { node: 'node2', claim: 'node2.b.1', expect: 'node1' } });
    assert.equal(claims.awaitsWord('c'), false);
    apply(claims, 'node1', claim('d', 'node1', 'node1.a.2'));
    apply(claims, 'node2', claim('d', 'node2', 'node2.b.2'));
    claims.nodeGone('node1');
    assert.deepEqual(told, ['let go d']);
    assert.equal(claims.awaitsWord('d'), false);
  });
});

