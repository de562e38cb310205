/**
 * Services plugins provide to each other, by name. A plugin that provides a service of its own adds
 * it here by declaration merging, so `engine.need('mqtt')` is typed where that plugin's types are
 * imported:
 *
 *   declare module 'engine' { interface EngineServices { myThing: MyThing } }
 *
 * The kernel declares the ports several plugins share, so a plugin that uses one imports nothing
 * of the plugin that provides it; the kernel imports no plugin.
 */
import type { DataService } from './data-service';
import type { HttpService } from './http-service';
import type { StoragePort } from './storage/storage-port';

export interface EngineServices {
  storage: StoragePort;
  /** Provided by plugins/http. */
  http: HttpService;
  /** Provided by plugins/data. */
  data: DataService;
}
