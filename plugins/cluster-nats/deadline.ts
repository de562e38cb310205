/**
 * A call to NATS bounded in time: the library may leave a JetStream call hanging (a server that
 * died mid-request), and nothing of the cluster may wait on one for ever.
 */

/** `action`'s promise, or a rejection once `ms` have passed (`what` names the call). */
export function withDeadline<T>(ms: number, what: string, action: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    action().then((value) => { clearTimeout(timer); resolve(value); }, (error: unknown) => { clearTimeout(timer); reject(error); });
  });
}
