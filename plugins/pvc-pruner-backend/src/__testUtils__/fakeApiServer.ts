import {
  createServer,
  IncomingMessage,
  Server,
  ServerResponse,
} from 'node:http';
import { AddressInfo } from 'node:net';
import { ClusterConnection } from '../kubernetes';

/** A request the fake API server got: its path, query, credentials and whether its answer was cut off. */
export interface FakeApiRequest {
  path: string;
  query: URLSearchParams;
  /** The Authorization header, if any. */
  authorization?: string;
  /** True once the client closed the connection before the answer ended. */
  closedEarly: boolean;
}

/**
 * A plain node:http server standing in for an API server that misbehaves in
 * exactly the way a test's handler says, with a connection to it (anonymous,
 * over http). Every connection is closed on `close`, even one the handler
 * left streaming.
 */
export async function startFakeApiServer(
  handler: (req: IncomingMessage, res: ServerResponse, url: URL) => unknown,
): Promise<{
  url: string;
  connection: ClusterConnection;
  requests: FakeApiRequest[];
  close: () => Promise<void>;
}> {
  const requests: FakeApiRequest[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://fake');
    const seen: FakeApiRequest = {
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
      closedEarly: false,
    };
    requests.push(seen);
    res.on('close', () => {
      seen.closedEarly = !res.writableFinished;
    });
    void handler(req, res, url);
  });
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    connection: new ClusterConnection(
      { name: 'fake', server: url, skipTLSVerify: true },
      async () => ({ type: 'anonymous' }),
      true,
    ),
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise(r => server.close(r));
    },
  };
}

/** Writes `chunk` again and again until the client goes away. */
export function streamForever(res: ServerResponse, chunk: string) {
  const write = () => {
    if (res.destroyed) return;
    if (res.write(chunk)) setImmediate(write);
    else res.once('drain', write);
  };
  write();
}
