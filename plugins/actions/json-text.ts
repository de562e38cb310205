/**
 * JSON text made before the response is (an SQL worker writes its result rows as the `data`
 * array's text, off the main thread), written into the response as it is (envelope.ts
 * responseText) instead of being parsed into values and written out again. Anything else that
 * serializes it gets the same JSON through `toJSON`.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
