/**
 * Checks of a review body that span fields or need the reviewed item, after the schema passed
 * (interface-spec "Review request": mirror fields are "law, optional" and "the full tuple is
 * posted with the decision"). Every failing field is collected, then one 422 names them all.
 */
import { ProblemError } from '../core/errors.ts';
import type { FieldError } from '../core/errors.ts';
import type { ReviewBody } from './schema.ts';
import type { ReviewItem } from './store.ts';

const TUPLE = ['mirror_grades', 'mirror_version', 'mirror_digest'] as const;

/** The mirror tuple is law-only and all-or-nothing. */
export function assertMirrorTuple(body: ReviewBody): void {
  const present = TUPLE.filter((k) => body[k] !== undefined);
  if (present.length === 0) return;
  const errors: FieldError[] = [];
  if (body.pack !== 'law') {
    for (const k of present) errors.push({ in: 'body', path: `/${k}`, message: `law only: the ${body.pack} pack has no grading mirror`, code: 'custom' });
  } else {
    for (const k of TUPLE) {
      if (body[k] === undefined) {
        errors.push({ in: 'body', path: `/${k}`, message: `required with ${present.join(', ')}: the full mirror tuple is posted together`, code: 'custom' });
      }
    }
  }
  if (errors.length > 0) throw ProblemError.validation(errors);
}

/** The body must name the pack the reviewed action was gated with. */
export function assertPackMatches(body: ReviewBody, item: ReviewItem): void {
  if (body.pack === item.pack) return;
  throw ProblemError.validation([
    { in: 'body', path: '/pack', message: `${item.actionKey} was gated with the ${item.pack} pack, not ${body.pack}`, code: 'custom' },
  ]);
}
