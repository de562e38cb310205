/** MQTT over TLS (`mqtts_port`): the http plugin's certificate pair when it is loaded, else the same files or self-signed pair. */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import { startServer } from '../helpers/server';
import { MQTT_PORTS, brokerUrl, connectOk, refusedCode, startBroker } from './mqtt-helpers';

function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(raw).fingerprint256);
    });
    socket.on('error', reject);
  });
}

describe('mqtt 07: tls', function () {
  this.timeout(30_000);

  it('connects 3.1.1 and 5 clients over mqtts with the HTTPS certificate, and refuses bad credentials', async () => {
    const server = await startServer({ plugins: ['storage-lmdb', 'http', 'messaging', 'mqtt'], ...MQTT_PORTS });
    try {
      const url = brokerUrl(server, 'mqtts');
      for (const protocolVersion of [4, 5] as const) {
        const { client, connack } = await connectOk(url, { protocolVersion, username: 'admin', password: 'ADMIN' });
        assert.equal(connack.returnCode ?? connack.reasonCode ?? 0, 0);
        await client.endAsync();
        assert.equal(await refusedCode(url, { protocolVersion, username: 'admin', password: 'nope' }), protocolVersion === 5 ? 0x86 : 0x04);
      }
      const port = server.engine.need('mqtt').ports.mqtts!;
      assert.equal(await servedFingerprint(port), server.engine.need('http').certificateFingerprint);
    } finally {
      await server.close();
    }
  });

  it('serves mqtts without the http plugin (a self-signed pair in data_dir/tls)', async () => {
    const server = await startBroker();
    try {
      const { client } = await connectOk(brokerUrl(server, 'mqtts'), { protocolVersion: 5, username: 'admin', password: 'ADMIN' });
      await client.endAsync();
    } finally {
      await server.close();
    }
  });

  it('keeps TLS listeners closed when their ports are off', async () => {
    const server = await startBroker({ mqtts_port: null, mqtt_wss_port: null });
    try {
      const { ports } = server.engine.need('mqtt');
      assert.equal(ports.mqtts, undefined);
      assert.equal(ports.wss, undefined);
      assert.equal(typeof ports.mqtt, 'number');
    } finally {
      await server.close();
    }
  });
});
