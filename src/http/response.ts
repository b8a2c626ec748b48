// The Response every answer this service builds is made with: the fetch ponyfill Yoga itself
// answers with. Its server writes a ponyfill Response's string body whole, with its Content-Length,
// in the same write as the headers; the global (undici) Response's body is a stream it pipes out
// chunked, a turn per read and one more write for the last chunk. Measured on a REST page: 9-30 %
// less CPU per request (BENCHMARKS.md, "REST answers in one write").
export { Response } from '@whatwg-node/fetch';
