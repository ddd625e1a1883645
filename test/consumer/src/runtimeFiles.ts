import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfigSchema } from '@backstage/config-loader';

/** Failures: the files a package ships beside its code differ from the repository's. */
export function checkSameFiles(
  installedDir: string,
  repoDir: string,
  files: string[],
): string[] {
  return files.flatMap(file => {
    const installed = join(installedDir, file);
    if (!existsSync(installed)) return [`${file} is missing from the package`];
    return readFileSync(installed).equals(readFileSync(join(repoDir, file)))
      ? []
      : [`${file} differs from the repository's`];
  });
}

/** Failures: the installed backend lacks one of the repository's migrations. */
export function checkMigrations(installedDir: string, repoDir: string) {
  const repo = readdirSync(join(repoDir, 'migrations'));
  return checkSameFiles(
    installedDir,
    repoDir,
    repo.map(file => `migrations/${file}`),
  );
}

/**
 * Failures: the installed backend's config schema is not the one Backstage
 * loads from an app's dependencies (it must reject a wrong pvcPruner value and
 * accept a right one).
 */
export async function checkConfigSchema(packageDir: string): Promise<string[]> {
  const schema = await loadConfigSchema({
    dependencies: [],
    packagePaths: [join(packageDir, 'package.json')],
    excludePackageDependencies: true,
  });
  const accepts = (data: object) => {
    try {
      schema.process([{ data, context: 'consumer-test' }]);
      return true;
    } catch {
      return false;
    }
  };
  const problems = [];
  if (!accepts({ pvcPruner: { leaseDurationSeconds: 30 } }))
    problems.push(
      'the config schema refuses pvcPruner.leaseDurationSeconds: 30',
    );
  if (accepts({ pvcPruner: { leaseDurationSeconds: 'soon' } }))
    problems.push(
      "the config schema accepts pvcPruner.leaseDurationSeconds: 'soon': it does not describe pvcPruner",
    );
  return problems;
}
