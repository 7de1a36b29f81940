/** The shared-memory protocol between signers/aws-kms.ts and its worker thread. */

/** Int32 slots at the start of the shared buffer. */
export const CONTROL = { state_index: 0, length_index: 1, length: 2 } as const;
export const STATE = { idle: 0, pending: 1, answered: 2 } as const;
/** The JSON answer follows the control words. */
export const DATA_OFFSET = 8;
export const SHARED_BYTES = 16 * 1024;

export interface KmsWorkerData {
  shared: SharedArrayBuffer;
  region: string;
  endpoint: string | null;
}

export type KmsRequest = { op: 'GetPublicKey'; keyId: string } | { op: 'Sign'; keyId: string; message: string };

export type KmsAnswer =
  | { ok: true; keyArn: string; publicKey: string; keySpec: string; keyUsage: string; signingAlgorithms: string[] }
  | { ok: true; signature: string }
  | { ok: false; error: string };
