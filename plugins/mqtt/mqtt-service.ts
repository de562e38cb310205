/** What the mqtt plugin provides: where its listeners ended up (port 0 picks a free port). */
export interface MqttService {
  /** Bound ports once listening; undefined when that listener is off. */
  readonly ports: { mqtt?: number; mqtts?: number; ws?: number; wss?: number };
}

declare module '../../kernel/services' {
  interface EngineServices {
    mqtt: MqttService;
  }
}
