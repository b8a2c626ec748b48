// The Response every answer this service builds is made with: the fetch ponyfill Yoga itself
// answers with. Its server writes a ponyfill Response's string body whole, with its Content-Length,
// in the same write as the headers; the global (undici) Response's body is a stream it pipes out
// chunked, a turn per read and one more write for the last chunk. Measured on a REST page: less
// CPU per request in each of six alternating pairs (BENCHMARKS.md, "REST answers in one write").
import { Response as FetchResponse } from '@whatwg-node/fetch';

export class Response extends FetchResponse {
  constructor(body?: BodyInit | null, init?: ResponseInit) {
    // Headers given as an object are handed over as pairs: the ponyfill's Headers, made from an
    // object, adds a second header where a later `set` names one in another case (a plugin setting
    // `WWW-Authenticate` on a 401 that already had it sent it twice); made from pairs, it replaces it.
    const headers = init?.headers;
    const isObject = headers && !Array.isArray(headers) && typeof (headers as Headers).get !== 'function';
    const pairs = isObject ? Object.entries(headers as Record<string, string>) : headers;
    super(body, init && { ...init, headers: pairs });
  }
}
