import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Every line of output is appended here. */
  logFile: string;
}

/** Runs a command to its end; rejects with the last lines of its output when it fails. */
export function run(
  command: string,
  args: string[],
  options: RunOptions,
): Promise<string> {
  appendFileSync(
    options.logFile,
    `\n$ (cd ${options.cwd} && ${command} ${args.join(' ')})\n`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      appendFileSync(options.logFile, chunk);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', code => {
      if (code === 0) {
        resolve(output);
        return;
      }
      const tail = output.trimEnd().split('\n').slice(-25).join('\n');
      reject(
        new Error(
          `\`${command} ${args.join(
            ' ',
          )}\` failed (exit ${code}):\n${tail}\n(whole log: ${
            options.logFile
          })`,
        ),
      );
    });
  });
}
