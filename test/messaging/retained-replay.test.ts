/**
 * A retained message's pointer (`retained/<topic>`) is written in the commit after the message's
 * own; at start the core reads again the messages after `retained-checkpoint`, kept in the log's
 * per-process state (`localState`). The crash between the two commits is simulated by undoing the
 * pointer writes in the data folder (storage alone) and moving the checkpoint back to 0, then
 * starting the full server on the same folder.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import type { MqttClient } from 'mqtt';
import { startServer, tempDataDir, type TestServer } from '../helpers/server';
import { startMessagingBroker, uniqueName } from '../mqtt/session-helpers';
import { closeClients, connectWithInbox, subscribe } from '../mqtt/pubsub-helpers';

const CHECKPOINT = 'retained-checkpoint';

describe('retained pointers replayed after a crash between the message and its pointer', function () {
  this.timeout(60_000);
  const dataDir = tempDataDir('retained-replay');
  let server: TestServer | undefined;
  const clients: MqttClient[] = [];

  after(async function () {
    await closeClients(...clients);
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function publish(topic: string, payload: string): Promise<number> {
    const { ids } = await server!.engine.bus.execute<{ ids: number[] }>('mq.publish',
      { messages: [{ topic, payload, retain: true, qos: 1 }] }, { principal: { account: 'admin', roles: ['admin'] }, origin: 'test' });
    return ids[0];
  }

  /** A live message after the retained ones a subscription gets (sent after its SUBACK). */
  async function marker(topic: string): Promise<void> {
    await server!.engine.bus.execute('mq.publish', { messages: [{ topic, payload: 'marker' }] }, { principal: { account: 'admin', roles: ['admin'] }, origin: 'test' });
  }

  /** Opens the data folder with the storage alone and changes the message core's state as a crash would have left it. */
  async function withStorageAlone(change: (state: ReturnType<typeof stateOf>, local: ReturnType<typeof localStateOf>) => Promise<void>): Promise<void> {
    const storageOnly = await startServer({ plugins: ['storage-lmdb'], data_dir: dataDir });
    try {
      await change(stateOf(storageOnly), localStateOf(storageOnly));
    } finally {
      await storageOnly.close({ keepData: true });
    }
  }

  function stateOf(s: TestServer) {
    return s.engine.need('storage').messageLog.state;
  }

  function localStateOf(s: TestServer) {
    return s.engine.need('storage').messageLog.localState;
  }

  it('a new subscriber gets the retained message whose pointer was lost; an empty retained message after one clears it', async function () {
    const kept = `${uniqueName('replay')}/kept`;
    const cleared = `${uniqueName('replay')}/cleared`;

    server = await startMessagingBroker({ data_dir: dataDir });
    const keptId = await publish(kept, 'survives the crash');
    const clearedId = await publish(cleared, 'cleared later');
    await publish(cleared, ''); // clears the topic's retained message; its pointer is removed
    // The pointers are written in the commit after the messages': a stored message makes sure they are durable.
    await publish(`${uniqueName('replay')}/other`, 'after');
    assert.equal(stateOf(server).get(`retained/${kept}`), keptId);
    assert.equal(stateOf(server).get(`retained/${cleared}`), undefined);
    // The sweep a server running over a second makes: the checkpoint passes every routed message.
    server.engine.need('messaging').sweep();
    assert.ok((localStateOf(server).get(CHECKPOINT) as number) > keptId);
    await server.close({ keepData: true });
    server = undefined;

    // The crash window: the messages are durable, the pointer writes after them are not (nor the
    // checkpoint past them). An earlier version kept the checkpoint in the shared state: 0 there too.
    await withStorageAlone(async (state, local) => {
      await state.remove(`retained/${kept}`);
      await state.put(`retained/${cleared}`, clearedId);
      await local.put(CHECKPOINT, 0);
      await state.put(CHECKPOINT, 0);
    });
    await withStorageAlone(async (state, local) => {
      assert.equal(state.get(`retained/${kept}`), undefined);
      assert.equal(state.get(`retained/${cleared}`), clearedId);
      assert.equal(local.get(CHECKPOINT), 0);
      assert.equal(state.get(CHECKPOINT), 0);
    });

    server = await startMessagingBroker({ data_dir: dataDir });

    // The retained message comes before a live marker published after the SUBACK.
    const { client, inbox } = await connectWithInbox(server);
    clients.push(client);
    await subscribe(client, kept, { qos: 1 });
    await marker(kept);
    const retained = await inbox.before(kept);
    assert.deepEqual(retained.map((m) => m.payload.toString()), ['survives the crash']);
    assert.equal(retained[0].packet.retain, true);

    // Nothing retained on the cleared topic.
    await subscribe(client, cleared, { qos: 1 });
    await marker(cleared);
    assert.deepEqual((await inbox.before(cleared)).map((m) => m.payload.toString()), []);

    assert.equal(stateOf(server).get(`retained/${kept}`), keptId, 'the replay writes the lost pointer again');
    assert.equal(stateOf(server).get(`retained/${cleared}`), undefined, 'the replay removes the pointer the empty message cleared');
    assert.equal(stateOf(server).get(CHECKPOINT), undefined, 'the checkpoint an earlier version shared is removed there');
  });
});
