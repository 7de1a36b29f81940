/**
 * The values a request carried, for core/errors.ts to keep out of error answers: path
 * parameters (stand-in `{name}`, as in the route pattern), query values (`{name}`) and the
 * string members of a JSON body that was read (`{reviewer}`, `{items/0/url}`: the member's
 * RFC 6901 pointer). Answers no route matched carry neither the path nor an instance (app.ts).
 */
import type { Context } from 'hono';
import type { CallerValue } from './errors.ts';

/** A body's string members beyond this many are not looked for (the body limit bounds the rest). */
const MAX_BODY_STRINGS = 2000;

const PLAIN_POINTER = /^[A-Za-z0-9_/-]{1,64}$/;

function decoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Each string member with its place as an RFC 6901 pointer without the leading slash. */
function bodyStrings(value: unknown, at: string, out: [string, string][]): void {
  if (out.length >= MAX_BODY_STRINGS) return;
  const join = (k: string | number) => (at === '' ? '' : `${at}/`) + String(k).replace(/~/g, '~0').replace(/\//g, '~1');
  if (typeof value === 'string') out.push([value, at]);
  else if (Array.isArray(value)) value.forEach((v, i) => bodyStrings(v, join(i), out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) bodyStrings(v, join(k), out);
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
    const strings: [string, string][] = [];
    try {
      bodyStrings(JSON.parse(body), '', strings);
    } catch {
      // Not JSON: quoted strings of it are the caller's all the same.
      for (const m of body.matchAll(/"((?:[^"\\]|\\.){0,4096})"/g)) strings.push([m[1]!, '']);
    }
    // A member's place is named only when it is a plain name: member names are the caller's too.
    for (const [value, at] of strings) add(value, PLAIN_POINTER.test(at) ? `{${at}}` : '(input)');
  }
  return out;
}
