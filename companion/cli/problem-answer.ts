/**
 * The companion's error answers as the command-line tools meet them: RFC 9457 problem+json
 * bodies, whether a request just got one back or someone saved one to a file and handed it to
 * the verifier. Either way the tools say what it is, its status and stable `code`
 * (DESIGN.md §6), rather than treating it as data: a saved 404 is not a record whose
 * canonical form failed.
 */
import { withoutQuery } from './service-url.ts';

/**
 * One line for an answer that is not a success: the URL, the status and, for an RFC 9457
 * problem body, its stable `code`, `detail` and failing fields; anything else shortened.
 */
export function refusalMessage(url: string, status: number, body: string): string {
  const problem = problemOf(body);
  if (!problem) return `${withoutQuery(url)} answered ${status}: ${body.slice(0, 500)}`;
  const fields = problem.errors.map((e) => `${e.path} ${e.message}`);
  return `${withoutQuery(url)} answered ${status} ${problem.code}${problem.detail ? `: ${problem.detail}` : ''}${fields.length ? ` (${fields.join('; ')})` : ''}`;
}

export interface ProblemSummary {
  status: number;
  code: string;
  detail: string | undefined;
  errors: { path: string; message: string }[];
}

/**
 * The companion's problem+json body (RFC 9457 §3: type, title, status; plus its stable `code`),
 * or undefined for anything else. Parsed text or an already parsed value.
 */
export function problemOf(body: unknown): ProblemSummary | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.type !== 'string' || typeof v.title !== 'string' || !Number.isInteger(v.status) || typeof v.code !== 'string') return undefined;
  const errors = Array.isArray(v.errors)
    ? v.errors.filter((e): e is { path: string; message: string } => typeof e?.path === 'string' && typeof e?.message === 'string').map((e) => ({ path: e.path, message: e.message }))
    : [];
  return { status: v.status as number, code: v.code, detail: typeof v.detail === 'string' ? v.detail : undefined, errors };
}

/** A file that holds an error answer where evidence was expected. */
export class ErrorAnswerFile extends Error {}

/** The verifier's line for a saved error answer: what was expected and what came instead. */
export function errorAnswerMessage(source: string, p: ProblemSummary): string {
  return `${source}: this is an error answer (problem+json ${p.status} ${p.code}), not a sealed record${p.detail ? `: ${p.detail}` : ''}`;
}
