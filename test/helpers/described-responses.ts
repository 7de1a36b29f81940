/**
 * Every response the API tests receive is checked against the OpenAPI description the app
 * itself serves: the operation (method and path template), the status (or `default`), the
 * media type and, for JSON, the body against its schema (ajv, JSON Schema 2020-12, which
 * OpenAPI 3.1 uses). test/companion/helpers.ts calls `assertDescribed` from its `request`,
 * so the description cannot drift from any behaviour some test exercises.
 *
 * Validators are compiled once per description and per (operation, status, media type), so
 * the cost is a few milliseconds per test file.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM interop.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

type Json = Record<string, any>;

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Json;
}

export interface DescribedResponse {
  method: string;
  path: string;
  status: number;
  contentType: string | null;
  text: string;
}

const DOC_ID = 'https://action-gate.invalid/openapi.json';

class DescriptionValidator {
  readonly #ajv: Ajv2020;
  readonly #operations: Operation[];
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(doc: Json) {
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema({ $id: DOC_ID, components: doc.components ?? {} });
    this.#operations = [];
    for (const [template, item] of Object.entries<Json>(doc.paths ?? {})) {
      for (const [method, op] of Object.entries<Json>(item)) {
        if (!op || typeof op !== 'object' || !op.responses) continue;
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
        this.#operations.push({ method: method.toUpperCase(), template, pattern: new RegExp(`^${source}$`), responses: op.responses });
      }
    }
    // Literal segments beat parameters: /v1/records/{action_key} before /{vertical}/evidence-packets/{action_key}.
    const params = (t: string) => (t.match(/\{/g) ?? []).length;
    this.#operations.sort((a, b) => params(a.template) - params(b.template));
  }

  /** Problems with this response; empty when it is exactly what the description says. */
  check(r: DescribedResponse): string[] {
    const op = this.#operations.find((o) => o.method === r.method && o.pattern.test(r.path));
    // Unrouted paths (404) and other methods (405) answer problem+json like any error.
    const where = op ? `${r.method} ${op.template}` : `${r.method} ${r.path} (no operation)`;
    const described = op ? (op.responses[String(r.status)] ?? op.responses.default) : { content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } } } };
    if (!described) return [`${where}: status ${r.status} is not described`];
    if (r.text === '' && !described.content) return [];
    const media = (r.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const content = described.content?.[media];
    if (!content) return [`${where} ${r.status}: media type ${JSON.stringify(media)} is not described (described: ${Object.keys(described.content ?? {}).join(', ') || 'none'})`];
    if (!content.schema) return [];
    let body: unknown = r.text;
    if (/json$/.test(media)) {
      try {
        body = JSON.parse(r.text);
      } catch {
        return [`${where} ${r.status}: body is not JSON`];
      }
    }
    const key = `${where} ${r.status} ${media}`;
    let validate = this.#compiled.get(key);
    if (!validate) {
      const schema = JSON.parse(JSON.stringify(content.schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`));
      validate = this.#ajv.compile(schema);
      this.#compiled.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${where} ${r.status}: ${e.instancePath || '(body)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
  }
}

const validators = new Map<string, DescriptionValidator>();

/** The validator for a description, compiled once per distinct document. */
export function descriptionValidator(doc: Json): DescriptionValidator {
  const key = JSON.stringify(doc);
  let v = validators.get(key);
  if (!v) {
    v = new DescriptionValidator(doc);
    validators.set(key, v);
  }
  return v;
}

/** Throws, naming every mismatch, when a response is not what the description says. */
export function assertDescribed(doc: Json, response: DescribedResponse): void {
  const problems = descriptionValidator(doc).check(response);
  if (problems.length > 0) {
    throw new Error(`response differs from the OpenAPI description:\n  ${problems.join('\n  ')}\nbody: ${response.text.slice(0, 500)}`);
  }
}
