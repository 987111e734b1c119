import http from 'node:http';
import { onResponseClose } from '../src';

describe('onResponseClose', () => {
  it('runs every hook once, in registration order, from a single close listener; late hooks never run', async () => {
    const ran: string[] = [];
    let counted = -1;
    let late: (() => void) | undefined;
    const server = http.createServer((_req, res) => {
      onResponseClose(res, () => ran.push('a'));
      onResponseClose(res, () => ran.push('b'));
      onResponseClose(res, () => ran.push('c'));
      counted = res.listenerCount('close');
      late = () => onResponseClose(res, () => ran.push('late'));
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const body = await new Promise<string>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
          let b = '';
          res.on('data', (c: Buffer) => (b += c));
          res.on('end', () => resolve(b));
        }).on('error', reject);
      });
      expect(body).toBe('ok');
      for (let i = 0; i < 50 && ran.length < 3; i++) await new Promise((r) => setTimeout(r, 5));
      expect(ran).toEqual(['a', 'b', 'c']);
      late?.();
      await new Promise((r) => setTimeout(r, 20));
      expect(ran).toEqual(['a', 'b', 'c']);
      // node:http adds none of its own on a server response: ours is the only one.
      expect(counted).toBe(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
