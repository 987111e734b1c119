// One error type for every configuration problem, so a composition root can catch it,
// print the message (which lists every problem at once) and exit non-zero.

export interface ConfigProblem {
  /** What the problem is about: an env variable name, or `file:line:column` for HCL. */
  readonly where: string;
  readonly message: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly ConfigProblem[];

  constructor(summary: string, problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.where}: ${p.message}`);
    super(lines.length > 0 ? `${summary}\n${lines.join('\n')}` : summary);
    this.problems = problems;
  }
}
