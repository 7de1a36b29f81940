/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the single byte form of every JSON value the
 * evidence format hashes or signs (DESIGN §3), plus a strict I-JSON (RFC 7493) parser so a
 * verifier can check that received text is already in that form.
 *
 * We sign exactly the data given: nothing is converted (no toJSON, no Date → string) and
 * nothing is dropped (no undefined members, no holes); anything without a JSON form is refused
 * with a coded SvcError naming its path, e.g. `$.items[2].price`.
 */
import { SvcError } from './errors.ts';
import { utf8 } from './encoding.ts';

/**
 * Deepest nesting of arrays/objects accepted by canonicalize and parseJson. RFC 8259 §9 lets
 * implementations limit depth; ours keeps recursion far from engine stack limits, so hostile
 * input fails with a coded error instead of a RangeError.
 */
export const MAX_JSON_DEPTH = 1000;

/** RFC 8785 §3.2: the canonical JSON text of `value`. */
export function canonicalize(value: unknown): string {
  const writer = new JcsWriter();
  writer.write(value);
  return writer.out;
}

/** RFC 8785 §3.2.4: the canonical text as UTF-8, the bytes that get hashed and signed. */
export function canonicalBytes(value: unknown): Uint8Array {
  return utf8(canonicalize(value));
}

/**
 * The JCS text of `value` as the member `name` of `parent`: the text canonicalize(parent) writes
 * after that member's name, with the same depth limit, cycle check and error paths
 * (`$.name...`). For writers of a fixed member list (attestation.ts).
 */
export function canonicalizeMember(parent: object, name: string, value: unknown): string {
  const writer = new JcsWriter();
  writer.within(parent, name);
  writer.write(value);
  return writer.out;
}

/**
 * RFC 8785 §3.2.2.2: the JCS text of one string, or undefined when it holds a lone surrogate
 * (which canonicalize refuses with a coded error naming where). For writers of a fixed member
 * list (attestation.ts) that splice member texts without walking a value.
 */
export function canonicalString(value: string): string | undefined {
  return isWellFormed(value) ? quoted(value) : undefined;
}

/**
 * JSON.stringify of a string, to the byte: lone surrogates escaped as \udXXX (ECMA-262
 * QuoteJSONString), which JCS would refuse instead. For writers of JSON text that splice member
 * texts (companion/evidence/sealed-response.ts); quicker than JSON.stringify for a string with
 * nothing to escape.
 */
export function jsonString(value: string): string {
  return isWellFormed(value) ? quoted(value) : JSON.stringify(value);
}

/** A character JSON text must escape in a string (RFC 8259 §7): quotation mark, reverse solidus, U+0000..U+001F. */
const MUST_ESCAPE = /["\\\u0000-\u001f]/;

/**
 * JSON.stringify of a well-formed string: the string between quotes when nothing in it must be
 * escaped (most member names and values here: ids, hashes, fixed texts), which makes no copy of
 * it, else JSON.stringify's own escaping.
 */
function quoted(value: string): string {
  return MUST_ESCAPE.test(value) ? JSON.stringify(value) : '"' + value + '"';
}

/**
 * True when `text` is exactly the JCS form of the I-JSON value it holds. Never throws on a
 * string: invalid JSON, duplicate names and lone surrogates all mean "not canonical".
 * Decode received bytes with `fromUtf8` (strict, keeps a BOM) before calling this.
 */
export function isCanonical(text: string): boolean {
  try {
    return canonicalize(parseJson(text)) === text;
  } catch (e) {
    if (e instanceof SvcError) return false;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Serialization

type PathSegment = string | number;

class JcsWriter {
  out = '';
  /** Containers from the root down to the value being written: cycle check and depth. */
  private readonly ancestors: object[] = [];
  /** Key or index of the value being written inside each ancestor, for error paths. */
  private readonly path: PathSegment[] = [];

  write(value: unknown): void {
    switch (typeof value) {
      case 'string':
        this.writeString(value);
        return;
      case 'number':
        // RFC 8785 §3.2.2.3: ECMAScript Number::toString, which also writes -0 as "0".
        // NaN and ±Infinity have no JSON form (RFC 8259 §6).
        if (!Number.isFinite(value)) throw this.unsupported(String(value));
        this.out += String(value);
        return;
      case 'boolean':
        this.out += value ? 'true' : 'false';
        return;
      case 'object':
        if (value === null) this.out += 'null';
        else if (Array.isArray(value)) this.writeArray(value);
        else if (isPlainObject(value)) this.writeObject(value);
        else throw this.unsupported(describeObject(value));
        return;
      default:
        // undefined, function, symbol, bigint. An undefined member or array element lands
        // here too: refused rather than dropped as JSON.stringify would, because a signature
        // over data with the member silently missing would attest something the caller did
        // not send.
        throw this.unsupported(typeof value);
    }
  }

  /** Writes what follows as the member `key` of `container` (canonicalizeMember). */
  within(container: object, key: string): void {
    this.path[this.enter(container)] = key;
  }

  private writeArray(array: readonly unknown[]): void {
    const level = this.enter(array);
    this.out += '[';
    for (let i = 0; i < array.length; i++) {
      this.path[level] = i;
      const item = array[i];
      if (item === undefined && !(i in array)) throw this.unsupported('an array hole');
      if (i > 0) this.out += ',';
      this.write(item);
    }
    this.out += ']';
    this.leave();
  }

  private writeObject(object: Record<string, unknown>): void {
    // Only own enumerable string keys are members (as for JSON.stringify); a symbol-keyed
    // property would otherwise vanish from the signed bytes without a word, so refuse it.
    if (Object.getOwnPropertySymbols(object).length > 0) {
      throw this.unsupported('an object with symbol-keyed properties');
    }
    const level = this.enter(object);
    // RFC 8785 §3.2.3: names sorted by their UTF-16 code units (sortNames).
    const keys = sortNames(Object.keys(object));
    this.out += '{';
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      this.path[level] = key;
      const opening = NAME_TEXTS.get(key);
      if (opening !== undefined) this.out += opening[i > 0 ? 1 : 0];
      else {
        if (i > 0) this.out += ',';
        this.writeName(key);
        this.out += ':';
      }
      this.write(object[key]);
    }
    this.out += '}';
    this.leave();
  }

  /** A member name not in NAME_TEXTS: written as any string, and a short one remembered while there is room. */
  private writeName(name: string): void {
    this.writeString(name);
    if (name.length <= NAME_KEPT_LENGTH && NAME_TEXTS.size < NAME_TEXTS_KEPT) {
      const text = quoted(name);
      NAME_TEXTS.set(name, [`${text}:`, `,${text}:`]);
    }
  }

  /** RFC 8785 §3.2.2.2 strings, used for values and member names alike. */
  private writeString(value: string): void {
    // RFC 8785 §3.2.2.2 requires well-formed Unicode (I-JSON, RFC 7493 §2.1): a lone
    // surrogate has no UTF-8 form, and JSON.stringify would escape it as \udXXX instead.
    if (!isWellFormed(value)) {
      const path = formatPath(this.path);
      throw new SvcError(
        'JCS_LONE_SURROGATE',
        // Never the value itself: it is caller data, and this message may reach a log.
        `expected well-formed Unicode at ${path}, got a lone surrogate`,
        { path },
      );
    }
    // ECMA-262 QuoteJSONString (well-formed since ES2019) escapes exactly what §3.2.2.2
    // mandates: \" \\ \b \t \n \f \r, other U+0000..U+001F as lowercase \u00xx, all else
    // literal. RFC 8785 §3.2.2.2 defines the scheme by that very function; a string with none
    // of those is written between quotes as it is (quoted).
    this.out += quoted(value);
  }

  /** Pushes a container; returns its level in `path`. Refuses cycles and excess depth. */
  private enter(container: object): number {
    // A cycle is an ancestor seen again; the same object twice side by side is fine (a DAG
    // serializes as a tree). Depth is small in practice, so a linear scan beats a Set.
    if (this.ancestors.includes(container)) {
      const path = formatPath(this.path);
      throw new SvcError('JCS_CYCLE', `expected acyclic data, got a reference back to an ancestor at ${path}`, {
        path,
      });
    }
    if (this.ancestors.length >= MAX_JSON_DEPTH) {
      throw this.unsupported(`nesting deeper than ${MAX_JSON_DEPTH} arrays/objects`);
    }
    this.ancestors.push(container);
    return this.path.push(0) - 1;
  }

  private leave(): void {
    this.ancestors.pop();
    this.path.pop();
  }

  private unsupported(got: string): SvcError {
    const path = formatPath(this.path);
    return new SvcError('JCS_UNSUPPORTED_VALUE', `expected a JSON value at ${path}, got ${got}`, { path });
  }
}

/**
 * Member names as writeString writes them, each with the colon after it, alone and after a comma
 * (the first member and the others), for the first NAME_TEXTS_KEPT names written: the same few
 * names recur in every document of one shape (an attestation's context, a seal's details), and a
 * lookup is quicker than checking each again and adds one string to the text instead of three.
 * Only names that were written are kept, so a name writeString refuses (a lone surrogate) is
 * never found here and is refused every time.
 */
const NAME_TEXTS = new Map<string, readonly [string, string]>();
/** At most this many names of at most NAME_KEPT_LENGTH code units: well under a megabyte, whatever documents a caller sends. */
const NAME_TEXTS_KEPT = 4096;
const NAME_KEPT_LENGTH = 64;

/** Objects with at most this many members have their names sorted in place (sortNames). */
const INSERTION_SORTED = 16;

/**
 * RFC 8785 §3.2.3: member names sorted by their UTF-16 code units, in place. A few names (every
 * object the evidence format writes) by insertion sort, which for names already in order is one
 * comparison each and allocates nothing; more by Array.prototype.sort with no comparator, which
 * compares strings by code units (ECMA-262 IsLessThan), exactly that order. The relational
 * operators on two strings compare the same way, so both give the same order.
 */
function sortNames(names: string[]): string[] {
  if (names.length > INSERTION_SORTED) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    if (names[j]! < name) continue;
    for (; j >= 0 && names[j]! > name; j--) names[j + 1] = names[j]!;
    names[j + 1] = name;
  }
  return names;
}

/**
 * Plain data: prototype null or a realm's Object.prototype (itself prototype-less), so objects
 * from another realm (iframe, vm) pass while Date, Map, Set, typed arrays, boxed primitives
 * and class instances do not; those would need a conversion we refuse to guess.
 */
function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function describeObject(value: object): string {
  const ctor: unknown = (Object.getPrototypeOf(value) as { constructor?: unknown }).constructor;
  const name =
    typeof ctor === 'function' && ctor.name !== '' ? ctor.name : Object.prototype.toString.call(value).slice(8, -1);
  return `a ${name} (only plain objects and arrays are JSON)`;
}

// In u-mode a surrogate pair is one code point, so this class matches only a lone half.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** ES2024 String.prototype.isWellFormed where the engine has it (faster), else the regex. */
const isWellFormed: (s: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (s) => !LONE_SURROGATE.test(s);

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** JSONPath-style location for error messages: `$`, `$.a[2]`, `$["odd key"]`. */
function formatPath(path: readonly PathSegment[]): string {
  let out = '$';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += IDENTIFIER.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

/**
 * Parses JSON text (RFC 8259) as I-JSON (RFC 7493), the input RFC 8785 §3.1 requires:
 * duplicate member names, numbers beyond IEEE 754 double range and lone surrogates are
 * refused, where JSON.parse would keep the last duplicate, return Infinity and accept them.
 * A `__proto__` member becomes an ordinary own property, as with JSON.parse.
 */
export function parseJson(text: string): unknown {
  if (typeof text !== 'string') {
    throw new SvcError('JCS_INVALID_JSON', `expected JSON text as a string, got ${typeof text}`);
  }
  return new IJsonParser(text).document();
}

// RFC 8259 §6 number grammar; sticky so `test` matches at lastIndex and leaves the end there.
const JSON_NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const SHORT_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

class IJsonParser {
  private pos = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  document(): unknown {
    const value = this.value();
    this.skipWhitespace();
    if (this.pos !== this.text.length) throw this.fail('end of input');
    return value;
  }

  private value(): unknown {
    this.skipWhitespace();
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x22) return this.string();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.number();
    if (this.text.startsWith('true', this.pos)) return this.literal(4, true);
    if (this.text.startsWith('false', this.pos)) return this.literal(5, false);
    if (this.text.startsWith('null', this.pos)) return this.literal(4, null);
    throw this.fail('a JSON value');
  }

  private object(): Record<string, unknown> {
    this.enter();
    const object: Record<string, unknown> = {};
    if (this.peekAfterWhitespace() === 0x7d) {
      this.pos++;
    } else {
      for (;;) {
        if (this.peekAfterWhitespace() !== 0x22) throw this.fail('a member name string');
        const keyOffset = this.pos;
        const key = this.string();
        // RFC 7493 §2.3: member names MUST be unique (after unescaping: "a" and "\u0061" clash).
        if (Object.hasOwn(object, key)) {
          throw new SvcError('JCS_DUPLICATE_MEMBER', `expected unique member names, got the name at offset ${keyOffset} twice`, {
            offset: keyOffset,
          });
        }
        if (this.peekAfterWhitespace() !== 0x3a) throw this.fail("':'");
        this.pos++;
        const member = this.value();
        // Plain assignment of "__proto__" would set the prototype instead of adding a member.
        if (key === '__proto__') {
          Object.defineProperty(object, key, { value: member, enumerable: true, writable: true, configurable: true });
        } else {
          object[key] = member;
        }
        if (!this.separator(0x7d)) break;
      }
    }
    this.depth--;
    return object;
  }

  private array(): unknown[] {
    this.enter();
    const array: unknown[] = [];
    if (this.peekAfterWhitespace() === 0x5d) {
      this.pos++;
    } else {
      do array.push(this.value());
      while (this.separator(0x5d));
    }
    this.depth--;
    return array;
  }

  /** After a member or element: true on ',', false on the closing bracket, else an error. */
  private separator(close: number): boolean {
    const c = this.peekAfterWhitespace();
    this.pos++;
    if (c === 0x2c) return true;
    if (c === close) return false;
    this.pos--;
    throw this.fail(`',' or '${String.fromCharCode(close)}'`);
  }

  /** RFC 8259 §7 string at `pos` (on its opening quote). */
  private string(): string {
    const { text } = this;
    const start = this.pos;
    let pos = start + 1;
    let chunk = pos;
    let out = '';
    for (;;) {
      if (pos >= text.length) {
        this.pos = start;
        throw this.fail('a closing \'"\' for the string starting here');
      }
      const c = text.charCodeAt(pos);
      if (c === 0x22) break;
      if (c < 0x20) {
        this.pos = pos;
        throw this.fail('control characters in strings to be escaped');
      }
      if (c !== 0x5c) {
        pos++;
        continue;
      }
      out += text.slice(chunk, pos);
      const escape = text.charAt(pos + 1);
      const short = SHORT_ESCAPES[escape];
      if (short !== undefined) {
        out += short;
        pos += 2;
      } else if (escape === 'u' && HEX4.test(text.slice(pos + 2, pos + 6))) {
        out += String.fromCharCode(parseInt(text.slice(pos + 2, pos + 6), 16));
        pos += 6;
      } else {
        this.pos = pos;
        throw this.fail('an escape \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
      }
      chunk = pos;
    }
    out += text.slice(chunk, pos);
    // RFC 7493 §2.1: no lone surrogates, escaped (\ud800) or raw.
    if (!isWellFormed(out)) {
      throw new SvcError('JCS_LONE_SURROGATE', `expected well-formed Unicode in the string at offset ${start}, got a lone surrogate`, {
        offset: start,
      });
    }
    this.pos = pos + 1;
    return out;
  }

  private number(): number {
    JSON_NUMBER.lastIndex = this.pos;
    if (!JSON_NUMBER.test(this.text)) throw this.fail('a number');
    const value = Number(this.text.slice(this.pos, JSON_NUMBER.lastIndex));
    // RFC 7493 §2.2: a number must fit an IEEE 754 double; 1e400 would become Infinity.
    if (!Number.isFinite(value)) throw this.fail('a number within IEEE 754 double range');
    this.pos = JSON_NUMBER.lastIndex;
    return value;
  }

  private literal(length: number, value: boolean | null): boolean | null {
    this.pos += length;
    return value;
  }

  private enter(): void {
    if (++this.depth > MAX_JSON_DEPTH) throw this.fail(`at most ${MAX_JSON_DEPTH} nested arrays/objects`);
    this.pos++;
  }

  private peekAfterWhitespace(): number {
    this.skipWhitespace();
    return this.text.charCodeAt(this.pos);
  }

  /** RFC 8259 §2: space, tab, line feed, carriage return; nothing else (no BOM, no NBSP). */
  private skipWhitespace(): void {
    const { text } = this;
    let c = text.charCodeAt(this.pos);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(++this.pos);
  }

  private fail(expected: string): SvcError {
    const got = this.pos >= this.text.length ? 'end of input' : JSON.stringify(this.text.slice(this.pos, this.pos + 12));
    return new SvcError('JCS_INVALID_JSON', `expected ${expected} at offset ${this.pos}, got ${got}`, { offset: this.pos });
  }
}
