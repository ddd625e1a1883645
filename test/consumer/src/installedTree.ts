import { builtinModules } from 'node:module';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

interface LockEntry {
  version?: string;
  resolved?: string;
  link?: boolean;
}

/** The tree npm installed in a folder, as its node_modules/.package-lock.json records it. */
export class InstalledTree {
  private readonly entries: Record<string, LockEntry>;

  constructor(readonly dir: string) {
    this.entries = JSON.parse(
      readFileSync(join(dir, 'node_modules/.package-lock.json'), 'utf8'),
    ).packages;
  }

  /** Every installed copy of a package: its path in the tree and its entry. */
  copiesOf(name: string): Array<[string, LockEntry]> {
    return Object.entries(this.entries).filter(
      ([path]) =>
        path === `node_modules/${name}` ||
        path.endsWith(`/node_modules/${name}`),
    );
  }

  /** Packages installed inside a package's own node_modules (not shared with the app). */
  nestedIn(name: string): Array<[string, LockEntry]> {
    const prefix = `node_modules/${name}/node_modules/`;
    return Object.entries(this.entries)
      .filter(([path]) => path.startsWith(prefix))
      .map(([path, entry]) => [path.slice(prefix.length), entry]);
  }

  packageDir(name: string): string {
    return join(this.dir, 'node_modules', name);
  }
}

/** Failures: a package's single copy must come from its tarball, at the workspace version. */
export function checkResolvedFromTarballs(
  tree: InstalledTree,
  packages: Array<{ name: string; version: string }>,
): string[] {
  return packages.flatMap(({ name, version }) => {
    const copies = tree.copiesOf(name);
    if (copies.length !== 1)
      return [
        `${name}: ${copies.length} copies installed (${
          copies.map(([p]) => p).join(', ') || 'none'
        })`,
      ];
    const [[path, entry]] = copies;
    const problems: string[] = [];
    if (path !== `node_modules/${name}`)
      problems.push(`${name} is installed only at ${path}`);
    if (!entry.resolved?.startsWith('file:'))
      problems.push(
        `${name} came from ${
          entry.resolved ?? 'nowhere recorded'
        }, not from its tarball`,
      );
    if (entry.version !== version)
      problems.push(`${name} is ${entry.version}, the tarball's is ${version}`);
    return problems;
  });
}

/**
 * Failures: one of our packages brings its own copy of a Backstage package at
 * a version nothing else in the app uses, because its range does not accept
 * the app's (a second @backstage/backend-defaults, a second React context, …).
 */
export function checkNoSecondCopies(
  tree: InstalledTree,
  ours: string[],
): string[] {
  const underOurs = (path: string) =>
    ours.some(name => path.startsWith(`node_modules/${name}/`));
  return ours.flatMap(name =>
    tree
      .nestedIn(name)
      .filter(([nested]) => nested.startsWith('@backstage/'))
      .flatMap(([nested, entry]) => {
        const elsewhere = tree
          .copiesOf(nested)
          .filter(([path]) => !underOurs(path))
          .map(([, other]) => other.version);
        return elsewhere.length === 0 || elsewhere.includes(entry.version)
          ? []
          : [
              `${name} brings its own ${nested} ${
                entry.version
              }; the app has ${elsewhere.join(', ')}`,
            ];
      }),
  );
}

const BUILTINS = new Set(builtinModules);
// A static import, require or dynamic import of a package (a name, not a path;
// a string in text, such as "… from ', '", does not look like one).
const IMPORT =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]((?:@[\w.-]+\/)?\w[\w.-]*(?:\/[\w.@-]+)*)['"]/gm;

function packageNameOf(specifier: string) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function jsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap(entry => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return jsFiles(path);
    return /\.(c|m)?js$/.test(entry) ? [path] : [];
  });
}

/**
 * Failures: a package's built code imports a package it does not declare. In
 * the workspace such an import resolves through hoisting; in an app it may not.
 */
export function checkDeclaredImports(packageDir: string): string[] {
  const pkg = JSON.parse(
    readFileSync(join(packageDir, 'package.json'), 'utf8'),
  );
  const declared = new Set([
    pkg.name,
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
    ...Object.keys(pkg.optionalDependencies ?? {}),
  ]);
  const problems = new Set<string>();
  for (const file of [
    ...jsFiles(join(packageDir, 'dist')),
    ...jsFiles(join(packageDir, 'migrations')),
  ]) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      if (specifier.startsWith('node:') || BUILTINS.has(specifier)) continue;
      const name = packageNameOf(specifier);
      if (!declared.has(name))
        problems.add(
          `${pkg.name}: ${relative(
            packageDir,
            file,
          )} imports ${specifier}, which package.json does not declare`,
        );
    }
  }
  return [...problems];
}
