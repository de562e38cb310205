/**
 * Services plugins provide to each other, by name. A plugin that provides a service adds it here
 * by declaration merging, so `engine.need('storage')` is typed:
 *
 *   declare module 'engine/kernel/services' { interface EngineServices { myThing: MyThing } }
 */
import type { StoragePort } from './storage/storage-port';
import type { HttpService } from '../plugins/http/http-service';

export interface EngineServices {
  storage: StoragePort;
  http: HttpService;
}
