import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** `dangerouslyAllow*` options of `type: catalog`, as upstream reads them. */
export interface CatalogLocatorSafety {
  /** Hostname patterns (`127.0.0.1`, `*.example.com`) that may use http or non-public addresses. */
  dangerouslyAllowClusterUrls?: string[];
  /** Lets entities set `kubernetes.io/skip-tls-verify`. */
  dangerouslyAllowSkipTLSVerify?: boolean;
}

function isNonPublicIp(ip: string) {
  try {
    return ipaddr.parse(ip).range() !== 'unicast';
  } catch {
    return true;
  }
}

function matchesPattern(hostname: string, pattern: string) {
  const host = hostname.toLowerCase();
  const p = pattern.toLowerCase();
  if (p.startsWith('*.'))
    return host.endsWith(p.slice(1)) || host === p.slice(2);
  return host === p;
}

const isIpLiteral = (hostname: string) =>
  ipaddr.isValid(hostname) || ipaddr.IPv6.isValid(hostname);

/**
 * The SSRF check upstream's CatalogClusterLocator applies to an entity's
 * `kubernetes.io/api-server`: https only, no credentials in the URL, and no
 * address that is not public, unless the host is dangerously allowed.
 */
export async function validateClusterApiServerUrl(
  apiServerUrl: string | undefined,
  options: CatalogLocatorSafety = {},
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(apiServerUrl ?? '');
  } catch {
    throw new Error('Kubernetes cluster API server URL is not a valid URL');
  }
  if (url.username || url.password)
    throw new Error(
      'Kubernetes cluster API server URL must not contain credentials',
    );
  const hostname = url.hostname.toLowerCase();
  const exempt = (options.dangerouslyAllowClusterUrls ?? []).some(p =>
    matchesPattern(hostname, p),
  );
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(
      'Kubernetes cluster API server URL must use the HTTP or HTTPS scheme',
    );
  if (exempt) return url;
  if (url.protocol !== 'https:')
    throw new Error(
      'Kubernetes cluster API server URL must use the HTTPS scheme',
    );
  if (isIpLiteral(hostname)) {
    if (isNonPublicIp(hostname))
      throw new Error(
        'Kubernetes cluster API server URL must not use a non-public IP address',
      );
    return url;
  }
  const addresses = await lookup(hostname, { all: true });
  if (addresses.some(a => isNonPublicIp(a.address)))
    throw new Error(
      `Kubernetes cluster API server URL hostname "${hostname}" resolves to a non-public address`,
    );
  return url;
}
