/**
 * An admin command that will not start: bad usage, a setting it cannot work with, a target
 * that is not empty. The command line prints its one-line message and exits 2, having
 * written nothing; failures found while working (a backup that does not verify) exit 1.
 */
export class AdminRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminRefusal';
  }
}
