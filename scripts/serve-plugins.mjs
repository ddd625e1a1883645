#!/usr/bin/env node
/*
 * Serves the tarballs of `npm run pack:plugins` (dist-packages/) as an npm
 * registry on 127.0.0.1, and passes every other request on to the registry
 * npm is configured with. A Backstage app can then install the plugin before
 * it is released, with the same commands as after:
 *
 *   npm run serve:plugins            # in this repository; prints the commands
 *
 * Yarn resolves a package's dependencies from a registry even when a tarball
 * of the dependency is installed beside it, so the backend's and the
 * frontend's dependency on backstage-plugin-pvc-pruner-common@<version>
 * can't be met by the -common tarball: it must come from a registry. With
 * npm, installing the three tarballs at once works without this server.
 *
 *   --port N   (default 4873)
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist-packages');
const { values } = parseArgs({
  options: { port: { type: 'string', default: '4873' } },
});
const port = Number(values.port);
const upstream = execFileSync('npm', ['config', 'get', 'registry'], {
  encoding: 'utf8',
})
  .trim()
  .replace(/\/$/, '');
const base = `http://127.0.0.1:${port}`;

/** name → { version, file, manifest, integrity, shasum } of each tarball in dist-packages/. */
function readTarballs() {
  const tarballs = new Map();
  for (const file of readdirSync(DIST).filter(f => f.endsWith('.tgz'))) {
    const path = join(DIST, file);
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', path, 'package/package.json'], {
        encoding: 'utf8',
      }),
    );
    const bytes = readFileSync(path);
    tarballs.set(manifest.name, {
      file,
      path,
      manifest,
      integrity: `sha512-${createHash('sha512')
        .update(bytes)
        .digest('base64')}`,
      shasum: createHash('sha1').update(bytes).digest('hex'),
    });
  }
  return tarballs;
}

let tarballs;
try {
  tarballs = readTarballs();
} catch {
  tarballs = new Map();
}
if (tarballs.size === 0) {
  console.error(
    'No tarballs in dist-packages/: run `npm run pack:plugins` first.',
  );
  process.exit(1);
}

function packument({ manifest, file, integrity, shasum }) {
  const { name, version } = manifest;
  return {
    name,
    'dist-tags': { latest: version },
    versions: {
      [version]: {
        ...manifest,
        _id: `${name}@${version}`,
        dist: { tarball: `${base}/${name}/-/${file}`, integrity, shasum },
      },
    },
  };
}

/** Passes a request on to the upstream registry and its answer back. */
async function proxy(req, res) {
  const headers = { accept: req.headers.accept ?? 'application/json' };
  if (req.headers.authorization)
    headers.authorization = req.headers.authorization;
  const answer = await fetch(`${upstream}${req.url}`, {
    headers,
    redirect: 'follow',
  });
  res.writeHead(answer.status, {
    'content-type':
      answer.headers.get('content-type') ?? 'application/octet-stream',
  });
  if (answer.body) Readable.fromWeb(answer.body).pipe(res);
  else res.end();
}

createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, base).pathname).slice(1);
  const [name, dash, file] = path.startsWith('@')
    ? [path.split('/').slice(0, 2).join('/'), ...path.split('/').slice(2)]
    : path.split('/');
  const ours = tarballs.get(name);
  if (req.method === 'GET' && ours && !dash) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(packument(ours)));
  } else if (
    req.method === 'GET' &&
    ours &&
    dash === '-' &&
    file === ours.file
  ) {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    createReadStream(ours.path).pipe(res);
  } else if (req.method === 'GET') {
    proxy(req, res).catch(e => {
      res.writeHead(502).end(String(e));
    });
  } else {
    res.writeHead(405).end('read-only');
  }
}).listen(port, '127.0.0.1', () => {
  const list = [...tarballs.values()].map(
    t => `${t.manifest.name}@${t.manifest.version}`,
  );
  const env = `YARN_NPM_REGISTRY_SERVER=${base} YARN_UNSAFE_HTTP_WHITELIST=127.0.0.1`;
  console.log(
    `Serving ${list.join(', ')} at ${base} (everything else from ${upstream}).`,
  );
  console.log('In your Backstage app:');
  console.log(
    `  ${env} yarn --cwd packages/backend add backstage-plugin-pvc-pruner-backend`,
  );
  console.log(
    `  ${env} yarn --cwd packages/app add backstage-plugin-pvc-pruner`,
  );
  console.log('Stop with Ctrl-C.');
});
