import { spawn } from 'node:child_process';
import { SupervisedProcess, Supervisor } from './supervisor';

/** A process that dies when told to. */
class FakeProcess implements SupervisedProcess {
  readonly ended: Promise<string>;
  die!: (how: string) => void;

  constructor() {
    this.ended = new Promise(resolve => {
      this.die = resolve;
    });
  }
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

async function until(check: () => boolean, what: string) {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

describe('Supervisor', () => {
  let clock = 0;
  const lines: string[] = [];
  const processes: FakeProcess[] = [];
  let gaveUp = 0;
  let supervisor: Supervisor | undefined;

  beforeEach(() => {
    clock = 0;
    lines.length = 0;
    processes.length = 0;
    gaveUp = 0;
  });
  afterEach(() => supervisor?.stop());

  const supervise = (policy = {}) => {
    supervisor = Supervisor.create({
      name: 'backend',
      launch: () => {
        const p = new FakeProcess();
        processes.push(p);
        return p;
      },
      say: line => lines.push(line),
      onGiveUp: () => gaveUp++,
      now: () => clock,
      policy: {
        initialDelayMs: 10,
        maxDelayMs: 40,
        healthyAfterMs: 1000,
        maxRestarts: 10,
        windowMs: 10_000,
        ...policy,
      },
    });
    supervisor.start();
    return supervisor;
  };

  it('restarts a process that died, saying so', async () => {
    supervise();
    expect(processes).toHaveLength(1);
    processes[0].die('signal SIGKILL');
    await until(() => processes.length === 2, 'the restart');
    expect(lines).toEqual([
      '[backend] backend exited (signal SIGKILL), restarting in 0.01 s',
    ]);
  });

  it('doubles the delay while the process keeps dying quickly, up to the cap, and starts over after a healthy run', async () => {
    supervise();
    for (let i = 0; i < 4; i++) {
      clock += 100; // died 100 ms after its start
      processes[i].die('code 1');
      await until(() => processes.length === i + 2, `restart ${i + 1}`);
    }
    clock += 5000; // ran for 5 s: healthy
    processes[4].die('code 1');
    await until(() => processes.length === 6, 'restart 5');
    expect(lines.map(l => l.replace(/.*restarting in /, ''))).toEqual([
      '0.01 s',
      '0.02 s',
      '0.04 s',
      '0.04 s',
      '0.01 s',
    ]);
  });

  it('gives up on a crash loop instead of restarting it forever', async () => {
    supervise({ maxRestarts: 3 });
    for (let i = 0; i < 3; i++) {
      clock += 10;
      processes[i].die('code 1');
      await until(() => processes.length === i + 2, `restart ${i + 1}`);
    }
    clock += 10;
    processes[3].die('code 1');
    await sleep(100);
    expect(processes).toHaveLength(4);
    expect(gaveUp).toBe(1);
    expect(lines.at(-1)).toBe(
      '[backend] backend exited (code 1) after 3 restarts within 10 s; not restarting it again',
    );
  });

  it('forgets restarts older than the window', async () => {
    supervise({ maxRestarts: 2, windowMs: 1000 });
    for (let i = 0; i < 4; i++) {
      clock += 600; // each restart is more than a window after the one before the last
      processes[i].die('code 1');
      await until(() => processes.length === i + 2, `restart ${i + 1}`);
    }
    expect(gaveUp).toBe(0);
  });

  it('starts nothing once stopped, not even a restart that was already due', async () => {
    supervise({ initialDelayMs: 50 });
    processes[0].die('signal SIGTERM');
    await sleep(5);
    supervisor!.stop();
    await sleep(120);
    expect(processes).toHaveLength(1);
  });

  it('brings back a real process killed with SIGKILL', async () => {
    const pids: number[] = [];
    supervisor = Supervisor.create({
      name: 'server',
      launch: () => {
        const child = spawn(
          process.execPath,
          ['-e', 'setInterval(() => {}, 1000)'],
          {
            stdio: 'ignore',
          },
        );
        pids.push(child.pid!);
        return {
          ended: new Promise(resolve =>
            child.once('exit', (code, signal) =>
              resolve(signal ? `signal ${signal}` : `code ${code}`),
            ),
          ),
        };
      },
      say: line => lines.push(line),
      onGiveUp: () => gaveUp++,
      policy: { initialDelayMs: 10 },
    });
    supervisor.start();
    process.kill(pids[0], 'SIGKILL');
    await until(() => pids.length === 2, 'the restart');
    expect(lines).toEqual([
      '[server] server exited (signal SIGKILL), restarting in 0.01 s',
    ]);
    supervisor.stop();
    process.kill(pids[1], 'SIGKILL');
  });
});
