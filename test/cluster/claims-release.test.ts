/**
 * How every node applies claims and releases of client ids (plugins/cluster-nats/session-claims.ts,
 * docs/cluster.md "Sessions"), record by record as the stream hands them over: a release lets go
 * of the claim it names only, so a release on its way never takes away a later claim. The
 * interleavings through real nodes are in test/cluster/11; this covers every order of the entries.
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
    const listener: Partial<SessionOwnershipListener> = { gained: (id) => told.push(`gained ${id}`), lost: (id) => told.push(`lost ${id}`) };
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
