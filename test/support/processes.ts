import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import request from 'supertest';
import { DEFAULT_PLATFORM } from './platforms';
import { DIST_DIR } from './dist';

export interface ServiceProcess {
  url: string;
  http: ReturnType<typeof request>;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves once the process has exited and its output has been read to the end ('close', not 'exit'). */
  closed: Promise<void>;
  /** SIGTERM (once: the service handles the first; a second would end it before its logs are flushed), then `closed`. */
  stop(): Promise<void>;
}

/** The address in the service's "listening on http://host:port" log line. */
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:(\d+))/;

/**
 * Starts the compiled service (`node dist/main.js`) as its own OS process and waits until it listens.
 * It binds a port of the system's choosing itself (PORT=0) and names it in its "listening on" line: no
 * port is probed and released for it to take (another process could take it in between).
 * `distDir`: another build of it (then run from the folder above, as an image runs it). The HTTP platform is
 * `env.HTTP_PLATFORM`, default TEST_HTTP_PLATFORM or express.
 */
export async function startServiceProcess(env: Record<string, string>, distDir?: string): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [join(distDir ?? DIST_DIR, 'main.js')], {
    ...(distDir ? { cwd: join(distDir, '..') } : {}),
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '0', HTTP_PLATFORM: DEFAULT_PLATFORM, ...env, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // 2 s after 'exit' at the latest: a process it started could hold the pipes open.
  const closed = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('exit', () => setTimeout(resolve, 2000).unref());
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start within 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = LISTENING.exec(output);
      if (listening && Number(listening[2]) > 0) {
        clearTimeout(timer);
        resolve(listening[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    http: request(url),
    child,
    output: () => output,
    closed,
    stop: () => {
      if (!child.killed && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return closed;
    },
  };
}
