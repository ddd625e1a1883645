import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { KubernetesCredential } from '@backstage/plugin-kubernetes-node';
import { Agent as UndiciAgent } from 'undici';

/** Where a cluster's API server is and how its certificate is checked. */
export interface ClusterEndpoint {
  name: string;
  /** The API server, without a trailing slash. */
  server: string;
  /** PEM of the CA that signed the server's certificate, if not a public one. */
  ca?: string;
  skipTLSVerify: boolean;
}

/** Asks for the credential of one request (the strategy decides whether it is cached). */
export type CredentialSource = () => Promise<KubernetesCredential>;

/** What one request carries: headers, and a client certificate for its TLS connection. */
interface RequestAuth {
  headers: Record<string, string>;
  clientCert?: { cert: string; key: string };
  /** Identifies the TLS identity (none, or a certificate), so connections are pooled per identity. */
  identity: string;
}

/** Client certificates rotate; connections of the last few identities stay pooled. */
const POOLED_IDENTITIES = 4;

function requestAuthOf(credential: KubernetesCredential): RequestAuth {
  if (credential.type === 'bearer token')
    return {
      headers: { authorization: `Bearer ${credential.token}` },
      identity: '',
    };
  if (credential.type === 'x509 client certificate')
    return {
      headers: {},
      clientCert: { cert: credential.cert, key: credential.key },
      identity: createHash('sha256')
        .update(credential.cert)
        .update('\0')
        .update(credential.key)
        .digest('hex'),
    };
  return { headers: {}, identity: '' };
}

/** Keeps a few values by key, closing the oldest when a new one comes. */
class Pool<T> {
  private readonly items = new Map<string, T>();
  constructor(private readonly close: (item: T) => void) {}

  get(key: string, make: () => T): T {
    let item = this.items.get(key);
    if (!item) {
      item = make();
      this.items.set(key, item);
      if (this.items.size > POOLED_IDENTITIES) {
        const [oldestKey, oldest] = this.items.entries().next().value!;
        this.items.delete(oldestKey);
        this.close(oldest);
      }
    }
    return item;
  }
}

/**
 * One cluster's API server as this plugin reaches it: the server's TLS
 * settings, and a credential asked for per request. Expiring credentials
 * (AWS, Azure, a Google service account, an in-cluster token file) are asked
 * for on every request, so a long prune never runs on a stale token; static
 * ones (a token from app-config, kubectl proxy, the token a user sent with
 * this request) are applied once. Keep-alive undici connections are pooled
 * per TLS identity, for every request: reads, writes and watches.
 */
export class ClusterConnection {
  private staticAuth?: Promise<RequestAuth>;
  private readonly dispatchers = new Pool<UndiciAgent>(
    agent => void agent.close().catch(() => undefined),
  );

  constructor(
    readonly endpoint: ClusterEndpoint,
    private readonly credential: CredentialSource,
    private readonly credentialIsStatic: boolean,
  ) {}

  /** Headers and an undici dispatcher for one request. */
  async forUndici(): Promise<{
    headers: Record<string, string>;
    dispatcher: UndiciAgent;
  }> {
    const auth = await this.requestAuth();
    return {
      headers: auth.headers,
      dispatcher: this.dispatchers.get(auth.identity, () =>
        this.newDispatcher(auth.clientCert),
      ),
    };
  }

  private requestAuth(): Promise<RequestAuth> {
    if (!this.credentialIsStatic) return this.credential().then(requestAuthOf);
    this.staticAuth ??= this.credential()
      .then(requestAuthOf)
      .catch(e => {
        this.staticAuth = undefined;
        throw e;
      });
    return this.staticAuth;
  }

  private newDispatcher(clientCert?: RequestAuth['clientCert']) {
    return new UndiciAgent({
      connect: {
        ca: this.endpoint.ca,
        rejectUnauthorized: !this.endpoint.skipTLSVerify,
        ...clientCert,
      },
    });
  }
}

/** The CA of a cluster as Backstage's Kubernetes backend reads it: `caFile`, else `caData` (base64 PEM). */
export function caOf(options: {
  caData?: string;
  caFile?: string;
}): string | undefined {
  if (options.caFile) return readFileSync(options.caFile, 'utf8');
  if (options.caData)
    return Buffer.from(options.caData, 'base64').toString('utf8');
  return undefined;
}
