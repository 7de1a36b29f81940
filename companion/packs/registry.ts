/**
 * The pack registry: the five gate packs and two record packs of interface-spec "What the
 * service does" 1, each with its manifest digest computed once at startup.
 */
import { manifestDigest } from './manifest.ts';
import type { GateManifest, GatePackName, PackManifest, RecordManifest, RecordPackName } from './manifest.ts';
import { CA_SB942_PACK } from './manifests/ca-sb942.ts';
import { DEFENSE_PACK } from './manifests/defense.ts';
import { EDUCATION_PACK } from './manifests/education.ts';
import { EU_AI_ACT_PACK } from './manifests/eu-ai-act.ts';
import { LAW_PACK } from './manifests/law.ts';
import { MEDICINE_PACK } from './manifests/medicine.ts';
import { US_REGULATORY_PACK } from './manifests/us-regulatory.ts';

export interface RegisteredPack<M extends PackManifest = PackManifest> {
  manifest: M;
  /** SHA-256 hex of the manifest's JCS bytes; committed as manifest_digest in every seal. */
  digest: string;
}

export type GatePack = RegisteredPack<GateManifest>;
export type RecordPack = RegisteredPack<RecordManifest>;

const register = <M extends PackManifest>(manifest: M): RegisteredPack<M> => Object.freeze({ manifest, digest: manifestDigest(manifest) });

// Listing order is the spec's order (interface-spec "What the service does" 1).
const GATE: readonly GatePack[] = [LAW_PACK, DEFENSE_PACK, MEDICINE_PACK, EDUCATION_PACK, US_REGULATORY_PACK].map(register);
const RECORD: readonly RecordPack[] = [EU_AI_ACT_PACK, CA_SB942_PACK].map(register);
const BY_NAME = new Map<string, RegisteredPack>([...GATE, ...RECORD].map((p) => [p.manifest.name, p]));

export function gatePacks(): readonly GatePack[] {
  return GATE;
}

export function recordPacks(): readonly RecordPack[] {
  return RECORD;
}

export function getPack(name: string): RegisteredPack | undefined {
  return BY_NAME.get(name);
}

export function getGatePack(name: GatePackName): GatePack;
export function getGatePack(name: string): GatePack | undefined;
export function getGatePack(name: string): GatePack | undefined {
  const pack = BY_NAME.get(name);
  return pack?.manifest.kind === 'gate' ? (pack as GatePack) : undefined;
}

export function getRecordPack(name: RecordPackName): RecordPack;
export function getRecordPack(name: string): RecordPack | undefined;
export function getRecordPack(name: string): RecordPack | undefined {
  const pack = BY_NAME.get(name);
  return pack?.manifest.kind === 'record' ? (pack as RecordPack) : undefined;
}
