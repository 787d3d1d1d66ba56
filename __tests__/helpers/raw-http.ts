/**
 * HTTP/1.x over a bare socket, for requests node:http will not send: several `Host` fields, a
 * request target with `#`, an absolute-form target, HTTP/1.0 without `Host`; and for answers
 * node:http would clean up (it discards a body sent after a HEAD response). The bytes go out as
 * given (`Connection: close` is added), and everything the server sends back is kept.
 */
import net from 'node:net';
import { DEFAULT_TIMEOUT_MS } from './http';

/** What came back: the status, the headers (names lower case, last one wins) and the body as text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Every byte after the header block, undecoded (latin1): for HEAD, what must be nothing. */
  afterHeaders: string;
}

/**
 * Sends `requestLine` (`GET /debug/vars HTTP/1.1`) and `headerLines` (each `Name: value`, none
 * added but `Connection: close`) to 127.0.0.1:`port` and reads the answer until the server closes.
 */
export function rawRequest(port: number, requestLine: string, headerLines: readonly string[]): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`${requestLine}: no end within ${DEFAULT_TIMEOUT_MS} ms`)), DEFAULT_TIMEOUT_MS);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('latin1');
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) {
        reject(new Error(`${requestLine}: no complete header block: ${JSON.stringify(raw.slice(0, 200))}`));
        return;
      }
      const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      const afterHeaders = raw.slice(end + 4);
      let body: Buffer = Buffer.from(afterHeaders, 'latin1');
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolve({ status: Number(statusLine?.split(' ')[1]), headers, text: body.toString('utf8'), afterHeaders });
    });
    socket.write(`${requestLine}\r\n${[...headerLines, 'Connection: close'].join('\r\n')}\r\n\r\n`, 'latin1');
  });
}

/** The payload of a chunked body. */
function unchunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
