import { RequestFramer } from '../src';

const MARKER = Buffer.from('x-marker: s3cret\r\n');

function run(input: string | Buffer, chunkSize?: number, maxBodyBytes?: number): { out: string; results: string[]; framer: RequestFramer } {
  const framer = new RequestFramer({ markerLine: MARKER, ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}) });
  const buf = Buffer.isBuffer(input) ? input : Buffer.from(input, 'latin1');
  const out: Buffer[] = [];
  const results: string[] = [];
  const step = chunkSize ?? buf.length;
  for (let i = 0; i < buf.length; i += step) results.push(framer.push(buf.subarray(i, i + step), out));
  return { out: Buffer.concat(out).toString('latin1'), results, framer };
}

describe('RequestFramer', () => {
  const list = 'LIST /v1/secret/metadata/ HTTP/1.1\r\nHost: x\r\n\r\n';
  const listRewritten = 'GET /v1/secret/metadata/ HTTP/1.1\r\nx-marker: s3cret\r\nHost: x\r\n\r\n';

  it('rewrites a LIST request line to GET plus the marker header', () => {
    const { out, framer } = run(list);
    expect(out).toBe(listRewritten);
    expect(framer.rewritten).toBe(1);
  });

  it('passes other requests through byte for byte', () => {
    const get = 'GET /v1/x HTTP/1.1\r\nHost: x\r\n\r\n';
    expect(run(get).out).toBe(get);
  });

  const inBody = 'LIST /v1/in-body HTTP/1.1\r\n';
  const inChunk = 'LIST /v1/in-chunk HTTP/1.1\r\n';
  const chunkLine = `${inChunk.length.toString(16)};ext=1\r\n`;
  const pipelined =
    `POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: ${inBody.length}\r\n\r\n` +
    inBody +
    list +
    'PUT /v1/c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' +
    chunkLine +
    inChunk +
    '\r\n0\r\nTrailer: t\r\n\r\n' +
    '\r\n' +
    list;
  const expected =
    `POST /v1/a HTTP/1.1\r\nHost: x\r\nContent-Length: ${inBody.length}\r\n\r\n` +
    inBody +
    listRewritten +
    'PUT /v1/c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n' +
    chunkLine +
    inChunk +
    '\r\n0\r\nTrailer: t\r\n\r\n' +
    '\r\n' +
    listRewritten;

  it('follows Content-Length and chunked bodies: LIST inside a body is data', () => {
    const { out, framer } = run(pipelined);
    expect(out).toBe(expected);
    expect(framer.rewritten).toBe(2);
    expect(framer.passthrough).toBe(false);
  });

  it.each([1, 2, 3, 7, 13])('gives the same bytes when fed in %i-byte pieces', (size) => {
    expect(run(pipelined, size).out).toBe(expected);
  });

  it('accepts bare-LF heads like llhttp', () => {
    expect(run('LIST /x HTTP/1.1\nHost: x\n\nGET /y HTTP/1.1\n\n').out).toBe('GET /x HTTP/1.1\nx-marker: s3cret\r\nHost: x\n\nGET /y HTTP/1.1\n\n');
  });

  it.each([
    ['an invalid Content-Length', 'POST /a HTTP/1.1\r\nContent-Length: 1x\r\n\r\nLIST /b HTTP/1.1\r\n\r\n'],
    ['duplicate Content-Length', 'POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nxLIST /b HTTP/1.1\r\n\r\n'],
    ['Content-Length with chunked', 'POST /a HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nLIST /b HTTP/1.1\r\n\r\n'],
    ['a non-chunked Transfer-Encoding', 'POST /a HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nLIST /b HTTP/1.1\r\n\r\n'],
    ['a bad chunk size', 'POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nLIST /b HTTP/1.1\r\n\r\n'],
    ['an upgrade', 'GET /a HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nLIST /b HTTP/1.1\r\n\r\n'],
  ])('passes the rest of the connection through untouched after %s', (_name, input) => {
    const { out, framer } = run(input);
    expect(out).toBe(input);
    expect(framer.passthrough).toBe(true);
  });

  it('forwards a partial head at once unless it may still be LIST', () => {
    const framer = new RequestFramer({ markerLine: MARKER });
    const out: Buffer[] = [];
    framer.push(Buffer.from('GET /x HTTP/1.1\r\nHo'), out);
    expect(Buffer.concat(out).toString()).toBe('GET /x HTTP/1.1\r\nHo');
    framer.push(Buffer.from('st: x\r\n\r\nLI'), out);
    expect(Buffer.concat(out).toString()).toBe('GET /x HTTP/1.1\r\nHost: x\r\n\r\n');
    framer.push(Buffer.from('ST /y HTTP/1.1\r\n\r\n'), out);
    expect(Buffer.concat(out).toString()).toBe('GET /x HTTP/1.1\r\nHost: x\r\n\r\nGET /y HTTP/1.1\r\nx-marker: s3cret\r\n\r\n');
    const tls = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc]);
    const garbage: Buffer[] = [];
    new RequestFramer({ markerLine: MARKER }).push(tls, garbage);
    expect(Buffer.concat(garbage)).toEqual(tls);
  });

  it('passes oversized heads through', () => {
    const head = 'LIST /a HTTP/1.1\r\nX: ' + 'a'.repeat(70 * 1024);
    const { out, framer } = run(head);
    expect(out).toBe(head);
    expect(framer.passthrough).toBe(true);
  });

  it('reports too-large bodies past the hard cap, per request', () => {
    const ok = 'POST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcdPOST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd';
    expect(run(ok, undefined, 4).results).toEqual(['ok']);
    const big = 'POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n';
    expect(run(big, undefined, 4).results).toEqual(['too-large']);
  });
});
