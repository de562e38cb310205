/**
 * A second MQTT client for `npm run bench -- mqtt`: it checks that a broker serves one more client
 * (CONNECT → CONNACK, SUBSCRIBE → SUBACK, a QoS 1 PUBLISH to its own topic → PUBACK and the
 * message back), each step bounded in time. Used before the publish scenarios (can the broker run
 * them at all?) and during and after the flood (does it keep serving?).
 */
import { connect as netConnect, type Socket } from 'node:net';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { HOST } from './load';

export type ProbeResult =
  | { ok: true; connackMs: number; roundTripMs: number; totalMs: number }
  | { ok: false; error: string };

let probes = 0;

/**
 * One probe against 127.0.0.1:port; `timeoutMs` bounds the whole exchange. `connectOnly` stops at
 * the CONNACK (the broker is up), reported with roundTripMs 0.
 */
export function probeBroker(port: number, timeoutMs: number, connectOnly = false): Promise<ProbeResult> {
  const id = `bench-probe-${process.pid}-${++probes}`;
  const topic = `bench/probe/${id}`;
  const started = performance.now();
  let step = 'connect';
  let connackMs = 0;
  let published = 0;
  let pubacked = false;
  let echoed = false;
  const socket: Socket = netConnect({ host: HOST, port });
  socket.setNoDelay(true);
  const parser = mqttPacket.parser({ protocolVersion: 4 });
  const send = (packet: Packet): void => { socket.write(mqttPacket.generate(packet, { protocolVersion: 4 })); };
  return new Promise<ProbeResult>((resolve) => {
    let settled = false;
    const finish = (result: ProbeResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (result.ok) socket.end(mqttPacket.generate({ cmd: 'disconnect' }, { protocolVersion: 4 }));
      else socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, error: `no answer to ${step} within ${timeoutMs} ms` }), timeoutMs);
    const roundTripDone = (): void => {
      if (!pubacked || !echoed) return;
      const now = performance.now();
      finish({ ok: true, connackMs, roundTripMs: now - published, totalMs: now - started });
    };
    socket.on('error', (error) => finish({ ok: false, error: `${step}: ${error.message}` }));
    socket.on('close', () => finish({ ok: false, error: `connection closed by the broker at ${step}` }));
    parser.on('error', (error) => finish({ ok: false, error: `${step}: ${error.message}` }));
    socket.on('data', (chunk: Buffer) => parser.parse(chunk));
    socket.on('connect', () => {
      step = 'CONNECT';
      send({ cmd: 'connect', protocolId: 'MQTT', protocolVersion: 4, clean: true, clientId: id, keepalive: 60 });
    });
    parser.on('packet', (packet: Packet) => {
      if (packet.cmd === 'connack') {
        if (packet.returnCode) return finish({ ok: false, error: `CONNACK refused 0x${packet.returnCode.toString(16)}` });
        connackMs = performance.now() - started;
        if (connectOnly) return finish({ ok: true, connackMs, roundTripMs: 0, totalMs: connackMs });
        step = 'SUBSCRIBE';
        send({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic, qos: 1 }] });
      } else if (packet.cmd === 'suback') {
        const granted = Number(packet.granted[0]);
        if (!(granted <= 1)) return finish({ ok: false, error: `SUBACK refused 0x${granted.toString(16)}` });
        step = 'PUBLISH';
        published = performance.now();
        send({ cmd: 'publish', topic, payload: Buffer.from('probe'), qos: 1, retain: false, dup: false, messageId: 2 });
      } else if (packet.cmd === 'puback') {
        pubacked = true;
        roundTripDone();
      } else if (packet.cmd === 'publish' && packet.topic === topic) {
        if (packet.qos === 1 && packet.messageId !== undefined) send({ cmd: 'puback', messageId: packet.messageId });
        echoed = true;
        roundTripDone();
      }
    });
  });
}
