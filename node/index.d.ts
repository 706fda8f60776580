// Types of the retrylab Node helper (index.js).

/** One verdict of the CLI's JSON. */
export interface Verdict {
  check: string;
  judgement: 'passed' | 'failed' | 'not_judged';
  message: string;
  findings: { client: number | null; call: number | null; attempt: number | null; message: string }[];
}

/** The run as `retrylab run --format json` writes one. */
export interface Result {
  name: string;
  seed: number;
  status: string;
  passed: boolean;
  verdicts: Verdict[];
  warnings: string[];
  /** The verdicts, each call's end and the timeline, as `retrylab serve` prints them. */
  summary: string;
  /** The same as the snapshot writes it (real instants hidden). */
  report: string;
  trace: unknown;
  [key: string]: unknown;
}

export interface ServeOptions {
  /** A node:test context: its `after` stops the server whatever the test did. */
  t?: { after(fn: () => unknown): void };
  calls?: number;
  idle?: string;
  firstRequest?: string;
  timeout?: string;
  /** The `retrylab` executable (default: RETRYLAB_BIN, then PATH). */
  bin?: string;
}

export declare class Served {
  readonly file: string;
  readonly urls: Record<string, string>;
  url(name: string): string;
  finish(): Promise<Result>;
  result(): Promise<Result>;
  assertPassed(): Promise<void>;
  stop(): Promise<void>;
}

export declare class RetrylabError extends Error {}
export declare class ScenarioError extends RetrylabError {}
export declare function serve(file: string, options?: ServeOptions): Promise<Served>;
export declare function findBinary(): string;
export declare function failureMessage(file: string, result: Result): string;
