/**
 * The values a request carried, for core/errors.ts to keep out of error answers: path
 * parameters (stand-in `{name}`, as in the route pattern), query values (`{name}`) and the
 * string members of a JSON body that was read (`(input)`). Answers no route matched carry
 * neither the path nor an instance (app.ts).
 */
import type { Context } from 'hono';
import type { CallerValue } from './errors.ts';

/** A body's string members beyond this many are not looked for (the body limit bounds the rest). */
const MAX_BODY_STRINGS = 2000;

function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function bodyStrings(value: unknown, out: string[]): void {
  if (out.length >= MAX_BODY_STRINGS) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) bodyStrings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) bodyStrings(v, out);
}

export async function callerInput(c: Context): Promise<CallerValue[]> {
  const out: CallerValue[] = [];
  const add = (value: string, standIn: string) => {
    out.push({ value, standIn });
    const d = decoded(value);
    if (d !== value) out.push({ value: d, standIn });
  };
  try {
    for (const [name, value] of Object.entries(c.req.param() as Record<string, string>)) add(value, `{${name}}`);
  } catch {
    // No route matched: no parameters.
  }
  for (const [name, values] of Object.entries(c.req.queries())) for (const v of values) add(v, `{${name}}`);
  const text = (c.req.bodyCache as { text?: Promise<string> }).text;
  if (text !== undefined) {
    const body = await text.catch(() => '');
    const strings: string[] = [];
    try {
      bodyStrings(JSON.parse(body), strings);
    } catch {
      // Not JSON: quoted strings of it are the caller's all the same.
      for (const m of body.matchAll(/"((?:[^"\\]|\\.){0,4096})"/g)) strings.push(m[1]!);
    }
    for (const s of strings) add(s, '(input)');
  }
  return out;
}
