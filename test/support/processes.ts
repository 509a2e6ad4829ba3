import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { DEFAULT_PLATFORM } from './platforms';
import { DIST_DIR } from './dist';
import { freePort } from './ports';

export interface ServiceProcess {
  url: string;
  http: ReturnType<typeof request>;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the compiled service (`node dist/main.js`) as its own OS process and waits until it listens.
 * `distDir`: another build of it (then run from the folder above, as an image runs it). The HTTP platform is
 * `env.HTTP_PLATFORM`, default TEST_HTTP_PLATFORM or express.
 */
export async function startServiceProcess(env: Record<string, string>, distDir?: string): Promise<ServiceProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [join(distDir ?? DIST_DIR, 'main.js')], {
    ...(distDir ? { cwd: join(distDir, '..') } : {}),
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0', HTTP_PLATFORM: DEFAULT_PLATFORM, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start within 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening on')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    http: request(url),
    child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
