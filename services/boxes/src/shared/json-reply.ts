// A 200 answer whose JSON text is already made (a serialised form the presenter keeps):
// written as it is, with its length (which the request log reports).
import { Reply } from '@selfstack/http-kit';

export function jsonReply(text: string): Reply<string> {
  return new Reply(200, text, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)) });
}
