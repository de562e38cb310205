/**
 * Services plugins provide to each other, by name. A plugin that provides a service adds it here
 * by declaration merging, so `engine.need('http')` is typed where that plugin's types are imported:
 *
 *   declare module 'engine/kernel/services' { interface EngineServices { myThing: MyThing } }
 *
 * The kernel declares only the port it defines itself; the kernel imports no plugin.
 */
import type { StoragePort } from './storage/storage-port';

export interface EngineServices {
  storage: StoragePort;
}
