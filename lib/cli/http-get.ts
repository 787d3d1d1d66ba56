/**
 * One bounded GET: the doctor's only way to the network. Bounded in time (one deadline for
 * connecting, the headers and the body) and in bytes (a `Content-Length` over the bound is refused
 * before the body, a body that grows past it is cut off), no redirect followed, no compression
 * asked for. A failure is a {@link ReadFailure} whose message names what went wrong and what to do,
 * and never the token.
 */
import http from 'node:http';
import https from 'node:https';
import { errorMessage } from '../util/error-message';
import { formatRoundedDuration } from '../util/duration';

/** How to reach the server: the TLS and token options of the command line, resolved. */
export interface Connection {
  /** The bearer token, or undefined. */
  readonly token: string | undefined;
  /** The CA to trust (PEM), or undefined for Node's own list. */
  readonly ca: Buffer | undefined;
  /** The name the certificate is checked against, and sent as SNI, or undefined for the URL's host. */
  readonly servername: string | undefined;
  /** False with `--insecure-skip-tls-verify`. */
  readonly rejectUnauthorized: boolean;
  /** The deadline of one request in milliseconds; 0 for none. */
  readonly timeoutMs: number;
}

/** An answer read whole. */
export interface HttpAnswer {
  /** The status code. */
  readonly status: number;
  /** The `Content-Type` header, or an empty string. */
  readonly contentType: string;
  /** The body. */
  readonly body: Buffer;
}

/** Why a URL could not be read, said for a person: what happened and what to do about it. */
export class ReadFailure extends Error {
  override readonly name = 'ReadFailure';
}

/** The hint for a TLS error: which flag would help. */
function tlsHint(code: string): string {
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'the certificate names another host: pass --tls-server-name <name it names>';
  if (code === 'CERT_HAS_EXPIRED') return 'the server certificate has expired';
  return 'pass --certificate-authority <ca.crt> to trust its CA (or --insecure-skip-tls-verify)';
}

const TLS_CODES = /^(?:ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_)/;

/** A network error said for a person, with the way out. */
function failureOf(thrown: unknown, url: URL): ReadFailure {
  const code = (thrown as { code?: unknown } | null)?.code;
  const text = typeof code === 'string' ? code : '';
  if (text === 'ECONNREFUSED')
    return new ReadFailure(`connection refused by ${url.host}: is the replica (or kubectl port-forward) running?`);
  if (text === 'ENOTFOUND' || text === 'EAI_AGAIN') return new ReadFailure(`no such host: ${url.hostname}`);
  if (text === 'ERR_SSL_WRONG_VERSION_NUMBER' || text === 'EPROTO') {
    return new ReadFailure(`TLS handshake failed with ${url.host}: is it plain HTTP? try http://${url.host}${url.pathname}`);
  }
  if (TLS_CODES.test(text)) return new ReadFailure(`TLS: ${errorMessage(thrown)} (${text}): ${tlsHint(text)}`);
  if (text === 'ECONNRESET' && url.protocol === 'http:') {
    return new ReadFailure(`${url.host} closed the connection: does it serve HTTPS? try https://${url.host}${url.pathname}`);
  }
  return new ReadFailure(`${errorMessage(thrown)}${text === '' ? '' : ` (${text})`}`);
}

/** The request's options: the connection's TLS settings and token. */
function requestOptions(url: URL, connection: Connection): https.RequestOptions {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'accept-encoding': 'identity',
    'user-agent': 'controller-introspection-doctor',
  };
  if (connection.token !== undefined) headers['authorization'] = `Bearer ${connection.token}`;
  return {
    method: 'GET',
    headers,
    agent: false,
    ...(url.protocol === 'https:' && {
      ca: connection.ca,
      rejectUnauthorized: connection.rejectUnauthorized,
      ...(connection.servername !== undefined && { servername: connection.servername }),
    }),
  };
}

/**
 * GETs `url` and reads its body whole, at most `maxBytes`; rejects with a {@link ReadFailure} on a
 * network or TLS error, past the deadline, or past the byte bound. Any status is an answer.
 */
export function httpGet(url: URL, connection: Connection, maxBytes: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, requestOptions(url, connection));
    const fail = (failure: ReadFailure): void => {
      reject(failure);
      request.destroy();
    };
    const deadline =
      connection.timeoutMs > 0
        ? setTimeout(
            () => fail(new ReadFailure(`no answer within ${formatRoundedDuration(connection.timeoutMs)} (--request-timeout)`)),
            connection.timeoutMs,
          )
        : undefined;
    request.on('close', () => clearTimeout(deadline));
    request.on('error', (err) => fail(failureOf(err, url)));
    request.on('response', (response) => {
      const declared = Number(response.headers['content-length']);
      if (declared > maxBytes) return fail(new ReadFailure(`the answer is ${declared} bytes, over the bound of ${maxBytes}`));
      const chunks: Buffer[] = [];
      let length = 0;
      response.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > maxBytes) return fail(new ReadFailure(`the answer is over the bound of ${maxBytes} bytes`));
        chunks.push(chunk);
      });
      response.on('error', (err) => fail(failureOf(err, url)));
      response.on('end', () => {
        clearTimeout(deadline);
        resolve({
          status: response.statusCode ?? 0,
          contentType: String(response.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks),
        });
      });
    });
    request.end();
  });
}
