import { fork } from 'node:child_process';

/** A TypeScript script running in its own process, so its memory and CPU are its own. */
export interface ForkedScript<Ready, Request extends object = object> {
  /** What the script sent first, once it was ready. */
  ready: Ready;
  /** Sends a message and resolves with the script's next reply. */
  ask<T>(message: Request): Promise<T>;
  send(message: Request): void;
  /** Ends the script's process. */
  kill(): void;
}

/**
 * Forks `path` with the Backstage TypeScript transform and resolves once the
 * script sends its first message. Replies arrive in the order asked.
 */
export async function forkScript<Ready, Request extends object = object>(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ForkedScript<Ready, Request>> {
  const child = fork(path, {
    env,
    execArgv: [
      '--expose-gc',
      '--require',
      require.resolve('@backstage/cli/config/nodeTransform.cjs'),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // The TypeScript transform in the child also talks over IPC ({type: 'watch'}): listen for ours only.
  const replies: Array<(m: any) => void> = [];
  child.on('message', (m: any) => {
    if (m?.type !== 'watch') replies.shift()?.(m);
  });
  const next = <T>() => new Promise<T>(resolve => replies.push(resolve));
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', code =>
      reject(new Error(`${path} exited with ${code}`)),
    ),
  );
  const ready = await Promise.race([next<Ready>(), exited]);
  return {
    ready,
    ask: <T>(message: Request) => {
      const reply = next<T>();
      child.send(message);
      return Promise.race([reply, exited]);
    },
    send: message => child.send(message),
    kill: () => {
      child.removeAllListeners('exit');
      child.kill();
    },
  };
}
